// I2_S (bitnet.cpp, GGUF type 36), the x86 layout bitnet.cpp writes by default:
// ternary weights t in {-1, 0, +1} as 2-bit codes t + 1, one float scale per
// tensor. The flattened (row-major) tensor is cut in blocks of 128 weights,
// block i taking the 32 bytes at 32*i; weight j of a block sits in byte j % 32
// at bits 6 - 2*(j / 32) (weights 0-31 in bits 7-6, ..., 96-127 in bits 1-0).
// After the n/4 code bytes: the float32 scale, then padding up to n/4 + 32 bytes.
// Rows must be whole blocks (row length a multiple of 128), so row r starts at
// byte r * row_length / 4. A stray code 3 reads as +2, which is what
// bitnet.cpp's kernels compute (sum(code * q) - sum(q)); its quantizer never
// writes it.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kI2SBlockSize = 128;
constexpr int64_t kI2SBlockBytes = 32;
constexpr int64_t kI2STrailerBytes = 32;  // scale float + padding after the codes

// Tensor level. dst has n/4 + 32 bytes: codes, the scale, zero padding.
// Throws unless n is a multiple of 128 and every value is -1, 0 or +1.
void pack_i2s(const int8_t* ternary, int64_t n, float scale, uint8_t* dst);
// The n ternary values (code - 1) of a tensor or of whole blocks of one.
void unpack_i2s(const uint8_t* src, int64_t n, int8_t* ternary);
// The same n weights as their stored codes t + 1 (0..3).
void unpack_i2s_codes(const uint8_t* src, int64_t n, uint8_t* codes);
// The scale float stored after the codes of a tensor of n elements.
float i2s_tensor_scale(const uint8_t* tensor, int64_t n);
// Exact sum of t[j] * q[j] over a row of n weights.
int32_t dot_i2s_int(const uint8_t* row, const int8_t* q, int64_t n);

// Row functions of the format table: UNSCALED ternary values.
void dequantize_row_i2s(const uint8_t* row, float* dst, int64_t n);
// bitnet.cpp's quantize_i2_s rule, without the scale: |x| < 1e-6 -> 0, else sign(x).
void quantize_row_i2s(const float* src, uint8_t* row, int64_t n);
// float(dot_i2s_int(row, q, n)).
float dot_i8_i2s(const uint8_t* row, const int8_t* q, int64_t n);

}  // namespace lowbit
