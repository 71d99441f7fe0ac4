#include "quant/q1_0.h"

#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

namespace {

void unpack_q1_0_block(const BlockQ1_0& b, int8_t* v) {
  for (int64_t j = 0; j < kQ1_0BlockSize; ++j) v[j] = q1_0_bit(b, j) ? 1 : -1;
}

}  // namespace

void dequantize_row_q1_0(const uint8_t* row, float* dst, int64_t n) {
  dequantize_scaled_blocks<BlockQ1_0, kQ1_0BlockSize, unpack_q1_0_block>("q1_0", row, dst, n);
}

void quantize_row_q1_0(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q1_0", n, kQ1_0BlockSize);
  for (int64_t i = 0; i < n / kQ1_0BlockSize; ++i) {
    const float* x = src + i * kQ1_0BlockSize;  // [128]
    float sum_abs = 0.0f;
    for (int64_t j = 0; j < kQ1_0BlockSize; ++j) sum_abs += std::fabs(x[j]);
    BlockQ1_0 b{};
    b.d = float_to_fp16(sum_abs / static_cast<float>(kQ1_0BlockSize));
    for (int64_t j = 0; j < kQ1_0BlockSize; ++j)
      if (x[j] >= 0.0f) b.qs[j / 8] |= static_cast<uint8_t>(1u << (j % 8));
    store_block(row, i, b);
  }
}

float dot_i8_q1_0(const uint8_t* row, const int8_t* q, int64_t n) {
  return dot_i8_scaled_blocks<BlockQ1_0, kQ1_0BlockSize, unpack_q1_0_block>("q1_0", row, q, n);
}

}  // namespace lowbit
