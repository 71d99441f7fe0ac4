#include "quant/q5_k.h"

#include "core/half.h"
#include "quant/block_rows.h"
#include "quant/q4_k.h"

namespace lowbit {

void unpack_q5_k_values(const BlockQ5_K& b, uint8_t* v) {
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) {
      v[64 * p + l] = static_cast<uint8_t>((b.qs[32 * p + l] & 15) | ((b.qh[l] >> (2 * p)) & 1) << 4);
      v[64 * p + 32 + l] = static_cast<uint8_t>((b.qs[32 * p + l] >> 4) | ((b.qh[l] >> (2 * p + 1)) & 1) << 4);
    }
}

void dequantize_row_q5_K(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("q5_K", n, kQ5_KBlockSize);
  uint8_t v[kQ5_KBlockSize];
  for (int64_t i = 0; i < n / kQ5_KBlockSize; ++i) {
    const auto b = load_block<BlockQ5_K>(row, i);
    unpack_q5_k_values(b, v);
    dequantize_k_block(b.d, b.dmin, b.scales, v, dst + i * kQ5_KBlockSize);
  }
}

void quantize_row_q5_K(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q5_K", n, kQ5_KBlockSize);
  uint8_t q[kQ5_KBlockSize];
  for (int64_t i = 0; i < n / kQ5_KBlockSize; ++i) {
    BlockQ5_K b{};
    quantize_k_block(src + i * kQ5_KBlockSize, 31, &b.d, &b.dmin, b.scales, q);
    for (int p = 0; p < 4; ++p)
      for (int l = 0; l < 32; ++l) {
        const uint8_t lo = q[64 * p + l], hi = q[64 * p + 32 + l];
        b.qs[32 * p + l] = static_cast<uint8_t>((lo & 15) | (hi & 15) << 4);
        b.qh[l] = static_cast<uint8_t>(b.qh[l] | (lo >> 4) << (2 * p) | (hi >> 4) << (2 * p + 1));
      }
    store_block(row, i, b);
  }
}

float dot_q5_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n) {
  check_row_length("q5_K", n, kQ5_KBlockSize);
  float y = 0;
  uint8_t v[kQ5_KBlockSize];
  for (int64_t i = 0; i < n / kQ5_KBlockSize; ++i) {
    const auto b = load_block<BlockQ5_K>(row, i);
    unpack_q5_k_values(b, v);
    y += k_block_dot_q8k(b.d, b.dmin, b.scales, v, q + i * kQ5_KBlockSize, dx[i]);
  }
  return y;
}

}  // namespace lowbit
