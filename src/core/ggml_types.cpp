#include "core/ggml_types.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

#include "core/error.h"

namespace lowbit {

namespace {

constexpr std::array kTypes = {
    GgmlTypeInfo{GgmlType::F32, "f32", 1, 4},
    GgmlTypeInfo{GgmlType::F16, "f16", 1, 2},
    GgmlTypeInfo{GgmlType::Q4_0, "q4_0", 32, 18},
    GgmlTypeInfo{GgmlType::Q4_1, "q4_1", 32, 20},
    GgmlTypeInfo{GgmlType::Q5_0, "q5_0", 32, 22},
    GgmlTypeInfo{GgmlType::Q5_1, "q5_1", 32, 24},
    GgmlTypeInfo{GgmlType::Q8_0, "q8_0", 32, 34},
    GgmlTypeInfo{GgmlType::Q8_1, "q8_1", 32, 36},
    GgmlTypeInfo{GgmlType::Q2_K, "q2_K", 256, 84},
    GgmlTypeInfo{GgmlType::Q3_K, "q3_K", 256, 110},
    GgmlTypeInfo{GgmlType::Q4_K, "q4_K", 256, 144},
    GgmlTypeInfo{GgmlType::Q5_K, "q5_K", 256, 176},
    GgmlTypeInfo{GgmlType::Q6_K, "q6_K", 256, 210},
    GgmlTypeInfo{GgmlType::Q8_K, "q8_K", 256, 292},
    GgmlTypeInfo{GgmlType::IQ4_NL, "iq4_nl", 32, 18},
    GgmlTypeInfo{GgmlType::IQ4_XS, "iq4_xs", 256, 136},
    GgmlTypeInfo{GgmlType::I8, "i8", 1, 1},
    GgmlTypeInfo{GgmlType::I16, "i16", 1, 2},
    GgmlTypeInfo{GgmlType::I32, "i32", 1, 4},
    GgmlTypeInfo{GgmlType::I64, "i64", 1, 8},
    GgmlTypeInfo{GgmlType::F64, "f64", 1, 8},
    GgmlTypeInfo{GgmlType::BF16, "bf16", 1, 2},
    GgmlTypeInfo{GgmlType::TQ1_0, "tq1_0", 256, 54},
    GgmlTypeInfo{GgmlType::TQ2_0, "tq2_0", 256, 66},
    GgmlTypeInfo{GgmlType::I2_S, "i2_s", 1, 1},
    GgmlTypeInfo{GgmlType::Q1_0, "q1_0", 128, 18},
    GgmlTypeInfo{GgmlType::Q2_0, "q2_0", 64, 18},
};

}  // namespace

const GgmlTypeInfo* ggml_type_info(uint32_t id) {
  for (const auto& t : kTypes)
    if (static_cast<uint32_t>(t.type) == id) return &t;
  return nullptr;
}

const GgmlTypeInfo& ggml_type_info(GgmlType type) {
  const GgmlTypeInfo* info = ggml_type_info(static_cast<uint32_t>(type));
  if (info == nullptr) fail("unknown tensor type id ", static_cast<uint32_t>(type));
  return *info;
}

const char* ggml_type_name(GgmlType type) { return ggml_type_info(type).name; }

GgmlType ggml_type_from_name(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string known;
  for (const auto& t : kTypes) {
    std::string tn = t.name;
    std::transform(tn.begin(), tn.end(), tn.begin(), [](unsigned char c) { return std::tolower(c); });
    if (tn == lower) return t.type;
    known += (known.empty() ? "" : ", ") + tn;
  }
  fail("unknown tensor type '", name, "' (known: ", known, ")");
}

int64_t ggml_row_bytes(GgmlType type, int64_t n) {
  if (type == GgmlType::I2_S) {
    if (n % 4 != 0) fail("i2_s row of ", n, " elements is not a multiple of 4");
    return n / 4;
  }
  const GgmlTypeInfo& t = ggml_type_info(type);
  if (n < 0 || n % t.block_size != 0)
    fail(t.name, " row of ", n, " elements is not a multiple of the block size ", t.block_size);
  if (n / t.block_size > INT64_MAX / t.block_bytes) fail(t.name, " row of ", n, " elements: byte size overflows");
  return n / t.block_size * t.block_bytes;
}

int64_t ggml_tensor_bytes(GgmlType type, int64_t n_elements, int64_t row) {
  if (row <= 0 || n_elements < 0 || n_elements % row != 0)
    fail("tensor of ", n_elements, " elements does not split in rows of ", row);
  if (type == GgmlType::I2_S) {
    if (n_elements % 128 != 0) fail("i2_s tensor of ", n_elements, " elements is not a multiple of 128");
    return n_elements / 4 + 32;
  }
  const int64_t per_row = ggml_row_bytes(type, row);
  const int64_t rows = n_elements / row;
  if (rows != 0 && per_row > INT64_MAX / rows) fail("tensor byte size overflows");
  return per_row * rows;
}

}  // namespace lowbit
