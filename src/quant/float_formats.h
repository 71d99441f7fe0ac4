// Unquantized formats: F32 (little-endian IEEE single), F16 (IEEE half) and
// BF16 (the top 16 bits of a float). Writing rounds to nearest even (core/half.h).
// They are used in float only, so there is no dot_i8.
#pragma once

#include <cstdint>

namespace lowbit {

void dequantize_row_f32(const uint8_t* row, float* dst, int64_t n);
void quantize_row_f32(const float* src, uint8_t* row, int64_t n);

void dequantize_row_f16(const uint8_t* row, float* dst, int64_t n);
void quantize_row_f16(const float* src, uint8_t* row, int64_t n);

void dequantize_row_bf16(const uint8_t* row, float* dst, int64_t n);
void quantize_row_bf16(const float* src, uint8_t* row, int64_t n);

}  // namespace lowbit
