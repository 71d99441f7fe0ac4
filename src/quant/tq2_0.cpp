#include "quant/tq2_0.h"

#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

namespace {

// Element of the block stored in bit pair l of byte b (layout in tq2_0.h).
int64_t tq2_0_element(int64_t b, int64_t l) { return (b / 32) * 128 + l * 32 + b % 32; }

// 32 bytes of codes: bit pair l of byte m holds element 32 l + m. Fixed-length
// loops over pointers that cannot alias, which GCC vectorizes at -O2 (this
// runs over every weight when a TQ2_0 model is loaded).
void unpack_planes(const uint8_t* __restrict qs, int8_t* __restrict v) {
  for (int m = 0; m < 32; ++m) {
    v[m] = static_cast<int8_t>((qs[m] & 3) - 1);
    v[32 + m] = static_cast<int8_t>(((qs[m] >> 2) & 3) - 1);
    v[64 + m] = static_cast<int8_t>(((qs[m] >> 4) & 3) - 1);
    v[96 + m] = static_cast<int8_t>(((qs[m] >> 6) & 3) - 1);
  }
}

}  // namespace

void unpack_tq2_0_block(const BlockTQ2_0& b, int8_t* v) {
  for (int64_t half = 0; half < 2; ++half) unpack_planes(b.qs + 32 * half, v + 128 * half);
}

void dequantize_row_tq2_0(const uint8_t* row, float* dst, int64_t n) {
  dequantize_scaled_blocks<BlockTQ2_0, kTQ2_0BlockSize, unpack_tq2_0_block>("tq2_0", row, dst, n);
}

void quantize_row_tq2_0(const float* src, uint8_t* row, int64_t n) {
  check_row_length("tq2_0", n, kTQ2_0BlockSize);
  for (int64_t i = 0; i < n / kTQ2_0BlockSize; ++i) {
    const float* x = src + i * kTQ2_0BlockSize;  // [256]
    const float amax = block_absmax(x, kTQ2_0BlockSize);
    const float id = amax != 0.0f ? 1.0f / amax : 0.0f;
    BlockTQ2_0 b{};
    b.d = float_to_fp16(amax);
    for (int64_t byte = 0; byte < kTQ2_0BlockSize / 4; ++byte) {
      for (int64_t l = 0; l < 4; ++l) {
        const long code = std::lround(x[tq2_0_element(byte, l)] * id) + 1;
        b.qs[byte] = static_cast<uint8_t>(b.qs[byte] + ((code & 3) << (2 * l)));
      }
    }
    store_block(row, i, b);
  }
}

float dot_i8_tq2_0(const uint8_t* row, const int8_t* q, int64_t n) {
  return dot_i8_scaled_blocks<BlockTQ2_0, kTQ2_0BlockSize, unpack_tq2_0_block>("tq2_0", row, q, n);
}

}  // namespace lowbit
