#include "quant/q4_0.h"

#include <algorithm>
#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

namespace {

constexpr int64_t kHalf = kQ4_0BlockSize / 2;

}  // namespace

void unpack_q4_0_block(const BlockQ4_0& b, int8_t* v) {
  for (int64_t j = 0; j < kHalf; ++j) {
    v[j] = static_cast<int8_t>((b.qs[j] & 0x0f) - 8);
    v[j + kHalf] = static_cast<int8_t>((b.qs[j] >> 4) - 8);
  }
}

void dequantize_row_q4_0(const uint8_t* row, float* dst, int64_t n) {
  dequantize_scaled_blocks<BlockQ4_0, kQ4_0BlockSize, unpack_q4_0_block>("q4_0", row, dst, n);
}

void quantize_row_q4_0(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q4_0", n, kQ4_0BlockSize);
  for (int64_t i = 0; i < n / kQ4_0BlockSize; ++i) {
    const float* x = src + i * kQ4_0BlockSize;  // [32]
    float amax = 0.0f;
    float max = 0.0f;
    for (int64_t j = 0; j < kQ4_0BlockSize; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ4_0 b;
    b.d = float_to_fp16(d);
    for (int64_t j = 0; j < kHalf; ++j) {
      // Truncation toward zero after +8.5 is llama.cpp's rounding; x / d >= -8 keeps it >= 0.
      const int lo = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
      const int hi = std::min(15, static_cast<int>(static_cast<int8_t>(x[j + kHalf] * id + 8.5f)));
      b.qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
    store_block(row, i, b);
  }
}

float dot_i8_q4_0(const uint8_t* row, const int8_t* q, int64_t n) {
  return dot_i8_scaled_blocks<BlockQ4_0, kQ4_0BlockSize, unpack_q4_0_block>("q4_0", row, q, n);
}

}  // namespace lowbit
