#include "quant/q2_0.h"

#include <algorithm>
#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

namespace {

void unpack_q2_0_block(const BlockQ2_0& b, int8_t* v) {
  for (int64_t j = 0; j < kQ2_0BlockSize; ++j) v[j] = static_cast<int8_t>(q2_0_code(b, j) - 1);
}

}  // namespace

void dequantize_row_q2_0(const uint8_t* row, float* dst, int64_t n) {
  dequantize_scaled_blocks<BlockQ2_0, kQ2_0BlockSize, unpack_q2_0_block>("q2_0", row, dst, n);
}

void quantize_row_q2_0(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q2_0", n, kQ2_0BlockSize);
  for (int64_t i = 0; i < n / kQ2_0BlockSize; ++i) {
    const float* x = src + i * kQ2_0BlockSize;  // [64]
    const float amax = block_absmax(x, kQ2_0BlockSize);
    const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
    BlockQ2_0 b{};
    b.d = float_to_fp16(amax);
    for (int64_t j = 0; j < kQ2_0BlockSize; ++j) {
      const int code = std::clamp(static_cast<int>(std::round(x[j] * id)) + 1, 0, 3);
      b.qs[j / 4] |= static_cast<uint8_t>(code << (2 * (j % 4)));
    }
    store_block(row, i, b);
  }
}

float dot_i8_q2_0(const uint8_t* row, const int8_t* q, int64_t n) {
  return dot_i8_scaled_blocks<BlockQ2_0, kQ2_0BlockSize, unpack_q2_0_block>("q2_0", row, q, n);
}

}  // namespace lowbit
