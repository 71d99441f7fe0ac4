#include "quant/float_formats.h"

#include <cstring>

#include "core/half.h"

namespace lowbit {

namespace {

// Both 16-bit formats differ only in the conversion; rows are unaligned byte
// pointers, hence memcpy per element.
template <float (*ToFloat)(uint16_t)>
void dequantize_row_16(const uint8_t* row, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    dst[i] = ToFloat(h);
  }
}

template <uint16_t (*FromFloat)(float)>
void quantize_row_16(const float* src, uint8_t* row, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t h = FromFloat(src[i]);
    std::memcpy(row + 2 * i, &h, 2);
  }
}

}  // namespace

void dequantize_row_f32(const uint8_t* row, float* dst, int64_t n) {
  std::memcpy(dst, row, static_cast<size_t>(n) * sizeof(float));
}

void quantize_row_f32(const float* src, uint8_t* row, int64_t n) {
  std::memcpy(row, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_f16(const uint8_t* row, float* dst, int64_t n) { dequantize_row_16<fp16_to_float>(row, dst, n); }
void quantize_row_f16(const float* src, uint8_t* row, int64_t n) { quantize_row_16<float_to_fp16>(src, row, n); }
void dequantize_row_bf16(const uint8_t* row, float* dst, int64_t n) { dequantize_row_16<bf16_to_float>(row, dst, n); }
void quantize_row_bf16(const float* src, uint8_t* row, int64_t n) { quantize_row_16<float_to_bf16>(src, row, n); }

}  // namespace lowbit
