// The table of weight formats lowbit knows: for each GGUF type, the scalar
// reference functions that DEFINE the format (design.md rule 1). Optimized
// kernels are tested against these.
//
// Row functions work on one row of n elements (n a multiple of the block size),
// in the file's byte layout. I2_S is special: its one float scale per tensor
// sits after the whole tensor's codes, so its row functions return UNSCALED
// ternary values (-1, 0, +1) and tensor_scale() gives the factor.
#pragma once

#include <cstdint>

#include "core/ggml_types.h"

namespace lowbit {

struct WeightFormat {
  GgmlType type;
  // dst[0, n) = the row's values (I2_S: unscaled ternary).
  void (*dequantize_row)(const uint8_t* row, float* dst, int64_t n);
  // Quantizes n floats into one row; nullptr where lowbit does not write the format.
  // Ternary types (TQ1_0, TQ2_0, I2_S) expect values already in {-d, 0, +d} per block
  // or tensor and map them exactly; use ternarize_absmean() first for other data.
  void (*quantize_row)(const float* src, uint8_t* row, int64_t n);
  // Dot of one weight row with int8 activations q[0, n) (per-token absmax,
  // activation_quant.h): sum over blocks of d_block * (integer dot of the block),
  // accumulated in float in block order. The caller divides by the activation
  // scale (and multiplies by tensor_scale). nullptr for formats used only in
  // float (F32, F16, BF16, Q6_K).
  float (*dot_i8)(const uint8_t* row, const int8_t* q, int64_t n);
};

// nullptr when the type has no reference here.
const WeightFormat* find_weight_format(GgmlType type);
// Throws Error naming the type when it has no reference.
const WeightFormat& weight_format(GgmlType type);

// The per-tensor factor applied after dequantize_row / dot_i8: the I2_S scale
// float stored after the codes (n_elements / 4 bytes in), 1 for every other type.
float tensor_scale(GgmlType type, const uint8_t* tensor_data, int64_t n_elements);

// Byte offset of row r of a tensor with rows of `row_length` elements.
int64_t row_offset(GgmlType type, int64_t row_length, int64_t r);

}  // namespace lowbit
