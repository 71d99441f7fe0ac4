#include "quant/q8_0.h"

#include <cmath>
#include <cstring>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

namespace {

void unpack_q8_0_block(const BlockQ8_0& b, int8_t* v) { std::memcpy(v, b.qs, sizeof b.qs); }

}  // namespace

void dequantize_row_q8_0(const uint8_t* row, float* dst, int64_t n) {
  dequantize_scaled_blocks<BlockQ8_0, kQ8_0BlockSize, unpack_q8_0_block>("q8_0", row, dst, n);
}

void quantize_row_q8_0(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q8_0", n, kQ8_0BlockSize);
  for (int64_t i = 0; i < n / kQ8_0BlockSize; ++i) {
    const float* x = src + i * kQ8_0BlockSize;  // [32]
    const float amax = block_absmax(x, kQ8_0BlockSize);
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_0 b;
    b.d = float_to_fp16(d);
    for (int64_t j = 0; j < kQ8_0BlockSize; ++j) b.qs[j] = static_cast<int8_t>(std::round(x[j] * id));
    store_block(row, i, b);
  }
}

float dot_i8_q8_0(const uint8_t* row, const int8_t* q, int64_t n) {
  return dot_i8_scaled_blocks<BlockQ8_0, kQ8_0BlockSize, unpack_q8_0_block>("q8_0", row, q, n);
}

}  // namespace lowbit
