// FloatTileDots (float_tile_dots.h) for Q4_K and Q5_K rows (quant/q4_k.h,
// quant/q5_k.h), written once over a lane type S (x86_avx2/simd_avx2.h,
// x86_avx512/simd_avx512.h): each weight exactly as dequantize_row_q4_K /
// q5_K gives it (a multiply and a subtract, each rounded), times float
// activations. The two formats differ only in how the values unpack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/half.h"
#include "kernels/float_tile_dots.h"
#include "quant/q4_k.h"
#include "quant/q5_k.h"

namespace lowbit::simd {

// A super-block's 256 values into bytes, eight at a time in 64-bit words.
struct Q4KValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ4_K);
  static void unpack(const uint8_t* block, uint8_t* v /* [256] */) {
    constexpr uint64_t kLow4 = 0x0f0f0f0f0f0f0f0full;
    const uint8_t* qs = block + offsetof(BlockQ4_K, qs);
    for (int p = 0; p < 4; ++p)
      for (int w = 0; w < 4; ++w) {
        uint64_t a;
        std::memcpy(&a, qs + 32 * p + 8 * w, 8);
        const uint64_t lo = a & kLow4, hi = a >> 4 & kLow4;
        std::memcpy(v + 64 * p + 8 * w, &lo, 8);
        std::memcpy(v + 64 * p + 32 + 8 * w, &hi, 8);
      }
  }
};

struct Q5KValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ5_K);
  static void unpack(const uint8_t* block, uint8_t* v /* [256] */) {
    constexpr uint64_t kLow4 = 0x0f0f0f0f0f0f0f0full, kBit0 = 0x0101010101010101ull;
    const uint8_t* qs = block + offsetof(BlockQ5_K, qs);
    const uint8_t* qh = block + offsetof(BlockQ5_K, qh);
    for (int p = 0; p < 4; ++p)
      for (int w = 0; w < 4; ++w) {
        uint64_t a, h;
        std::memcpy(&a, qs + 32 * p + 8 * w, 8);
        std::memcpy(&h, qh + 8 * w, 8);
        const uint64_t lo = (a & kLow4) | (h >> (2 * p) & kBit0) << 4;
        const uint64_t hi = (a >> 4 & kLow4) | (h >> (2 * p + 1) & kBit0) << 4;
        std::memcpy(v + 64 * p + 8 * w, &lo, 8);
        std::memcpy(v + 64 * p + 32 + 8 * w, &hi, 8);
      }
  }
};

// Q4_K and Q5_K share d, dmin and scales at the block's start.
static_assert(offsetof(BlockQ4_K, d) == offsetof(BlockQ5_K, d) && offsetof(BlockQ4_K, dmin) == offsetof(BlockQ5_K, dmin) &&
              offsetof(BlockQ4_K, scales) == offsetof(BlockQ5_K, scales));

template <class S, class Values, int kTokens>
void k_quant_row(const uint8_t* row, int64_t blocks, const float* x, int64_t x_stride, float* y, int64_t y_stride) {
  using V = typename S::V;
  // Two accumulators per token, alternating by sub-block, break the FMA chain.
  V acc[kTokens][2];
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) acc[t][0] = acc[t][1] = S::zero();
  // Unpacked one block ahead, so a block's loads do not wait on its own
  // 8-byte stores (a load spanning two stores in flight cannot be forwarded).
  alignas(64) uint8_t unpacked[2][256];
  if (blocks > 0) Values::unpack(row, unpacked[0]);
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* block = row + i * Values::kBlockBytes;
    if (i + 1 < blocks) Values::unpack(block + Values::kBlockBytes, unpacked[(i + 1) & 1]);
    const uint8_t* v = unpacked[i & 1];
    uint16_t d16, dmin16;
    std::memcpy(&d16, block + offsetof(BlockQ4_K, d), 2);
    std::memcpy(&dmin16, block + offsetof(BlockQ4_K, dmin), 2);
    const float d = fp16_to_float(d16), dmin = fp16_to_float(dmin16);
    const uint8_t* scales = block + offsetof(BlockQ4_K, scales);
    const float* xb = x + i * 256;
    const auto sub_block = [&](int j, int a) {
      int sc, m;
      q4_k_scale_min(scales, j, &sc, &m);
      const V step = S::set1(d * static_cast<float>(sc)), offset = S::set1(dmin * static_cast<float>(m));
      #pragma GCC unroll 4
      for (int c = 0; c < 32; c += S::kLanes) {
        const V w = S::sub(S::mul(S::load_u8(v + 32 * j + c), step), offset);
        #pragma GCC unroll 8
        for (int t = 0; t < kTokens; ++t) acc[t][a] = S::fmadd(w, S::load(xb + t * x_stride + 32 * j + c), acc[t][a]);
      }
    };
    // Constant accumulator indices: with a computed one the compiler keeps them in memory.
    #pragma GCC unroll 4
    for (int j = 0; j < 8; j += 2) {
      sub_block(j, 0);
      sub_block(j + 1, 1);
    }
  }
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) y[t * y_stride] = S::reduce_add(S::add(acc[t][0], acc[t][1]));
}

// Row by row, each one sequential stream; tokens in blocks of kFloatTileTokens.
template <class S, class Values>
void k_quant_tile_dots(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride, int tokens,
                       int64_t k, float* y, int64_t y_stride) {
  const int64_t blocks = k / 256;
  for (int r = 0; r < rows; ++r) {
    const uint8_t* row = w + r * row_bytes;
    switch (tokens) {
      case 1: k_quant_row<S, Values, 1>(row, blocks, x, x_stride, y + r, y_stride); break;
      case 2: k_quant_row<S, Values, 2>(row, blocks, x, x_stride, y + r, y_stride); break;
      case 3: k_quant_row<S, Values, 3>(row, blocks, x, x_stride, y + r, y_stride); break;
      default: k_quant_row<S, Values, 4>(row, blocks, x, x_stride, y + r, y_stride); break;
    }
  }
}

}  // namespace lowbit::simd
