#include "quant/tq1_0.h"

#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

namespace {

constexpr int64_t kPackedBytes = 52;  // qs then qh
constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};

// Trits stored in packed byte b, and the element holding trit k (layout in tq1_0.h).
int64_t tq1_0_trits(int64_t b) { return b < 48 ? 5 : 4; }
int64_t tq1_0_element(int64_t b, int64_t k) {
  if (b < 32) return k * 32 + b;
  if (b < 48) return 160 + k * 16 + (b - 32);
  return 240 + k * 4 + (b - 48);
}

uint8_t packed_byte(const BlockTQ1_0& blk, int64_t b) { return b < 48 ? blk.qs[b] : blk.qh[b - 48]; }
uint8_t& packed_byte(BlockTQ1_0& blk, int64_t b) { return b < 48 ? blk.qs[b] : blk.qh[b - 48]; }

}  // namespace

void unpack_tq1_0_block(const BlockTQ1_0& blk, int8_t* v) {
  for (int64_t b = 0; b < kPackedBytes; ++b) {
    for (int64_t k = 0; k < tq1_0_trits(b); ++k) {
      const uint8_t shifted = static_cast<uint8_t>(packed_byte(blk, b) * kPow3[k]);
      v[tq1_0_element(b, k)] = static_cast<int8_t>(((shifted * 3) >> 8) - 1);
    }
  }
}

void dequantize_row_tq1_0(const uint8_t* row, float* dst, int64_t n) {
  dequantize_scaled_blocks<BlockTQ1_0, kTQ1_0BlockSize, unpack_tq1_0_block>("tq1_0", row, dst, n);
}

void quantize_row_tq1_0(const float* src, uint8_t* row, int64_t n) {
  check_row_length("tq1_0", n, kTQ1_0BlockSize);
  for (int64_t i = 0; i < n / kTQ1_0BlockSize; ++i) {
    const float* x = src + i * kTQ1_0BlockSize;  // [256]
    const float amax = block_absmax(x, kTQ1_0BlockSize);
    const float id = amax != 0.0f ? 1.0f / amax : 0.0f;
    BlockTQ1_0 blk{};
    blk.d = float_to_fp16(amax);
    for (int64_t b = 0; b < kPackedBytes; ++b) {
      // Five base-3 digits, most significant first; qh bytes get a trailing 0 digit.
      uint32_t digits = 0;
      for (int64_t k = 0; k < 5; ++k) {
        const long trit = k < tq1_0_trits(b) ? std::lround(x[tq1_0_element(b, k)] * id) + 1 : 0;
        digits = static_cast<uint8_t>(digits * 3 + trit);
      }
      packed_byte(blk, b) = static_cast<uint8_t>((digits * 256 + 242) / 243);  // ceil(digits * 256 / 3^5)
    }
    store_block(row, i, blk);
  }
}

float dot_i8_tq1_0(const uint8_t* row, const int8_t* q, int64_t n) {
  return dot_i8_scaled_blocks<BlockTQ1_0, kTQ1_0BlockSize, unpack_tq1_0_block>("tq1_0", row, q, n);
}

}  // namespace lowbit
