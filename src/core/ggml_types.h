// Tensor element types as numbered in GGUF files (ggml's ids, plus bitnet.cpp's
// I2_S), with the block geometry every room needs to size a tensor. The
// formats themselves (bit layouts, references) live in src/quant.
#pragma once

#include <cstdint>
#include <string>

namespace lowbit {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  I2_S = 36,  // bitnet.cpp; 36 is retired upstream (was IQ4_NL_4_4)
  Q1_0 = 41,
  Q2_0 = 42,
};

struct GgmlTypeInfo {
  GgmlType type;
  const char* name;      // as llama.cpp prints it: "f16", "q8_0", "i2_s"
  int64_t block_size;    // elements per block
  int64_t block_bytes;   // bytes per block
};

// nullptr when the id is not one lowbit knows.
const GgmlTypeInfo* ggml_type_info(uint32_t id);
const GgmlTypeInfo& ggml_type_info(GgmlType type);
const char* ggml_type_name(GgmlType type);
// Case-insensitive lookup by name ("i2_s", "Q8_0"); throws Error listing the known names.
GgmlType ggml_type_from_name(const std::string& name);

// Bytes of a row of n elements; throws Error when n is not a multiple of the block size.
int64_t ggml_row_bytes(GgmlType type, int64_t n);
// Bytes of a whole tensor of n elements with rows of length row: I2_S adds its
// trailing 32 bytes (scale + padding) to n/4. Throws Error on misfit shapes or overflow.
int64_t ggml_tensor_bytes(GgmlType type, int64_t n_elements, int64_t row);

}  // namespace lowbit
