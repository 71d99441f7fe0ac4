// FloatTileDots (float_tile_dots.h) for Q6_K rows (quant/q6_k.h), written once
// over a lane type S (x86_avx2/simd_avx2.h, x86_avx512/simd_avx512.h): each
// weight exactly as dequantize_row_q6_K gives it, times float activations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/half.h"
#include "kernels/float_tile_dots.h"
#include "quant/q6_k.h"

namespace lowbit::simd {

// A super-block's 256 6-bit values (0..63, i.e. value + 32) into bytes, eight
// at a time in 64-bit words (the bit layout of quant/q6_k.h).
inline void unpack_q6_k(const uint8_t* block, uint8_t* v /* [256] */) {
  constexpr uint64_t kLow4 = 0x0f0f0f0f0f0f0f0full, kLow2 = 0x0303030303030303ull;
  const uint8_t* ql = block;        // [128]
  const uint8_t* qh = block + 128;  // [64]
  for (int h = 0; h < 2; ++h) {
    for (int w = 0; w < 4; ++w) {
      uint64_t a, c, hb;
      std::memcpy(&a, ql + 64 * h + 8 * w, 8);
      std::memcpy(&c, ql + 64 * h + 32 + 8 * w, 8);
      std::memcpy(&hb, qh + 32 * h + 8 * w, 8);
      const uint64_t out[4] = {(a & kLow4) | (hb & kLow2) << 4, (c & kLow4) | (hb >> 2 & kLow2) << 4,
                               (a >> 4 & kLow4) | (hb >> 4 & kLow2) << 4, (c >> 4 & kLow4) | (hb >> 6 & kLow2) << 4};
      for (int q = 0; q < 4; ++q) std::memcpy(v + 128 * h + 32 * q + 8 * w, &out[q], 8);
    }
  }
}

template <class S, int kTokens>
void q6_k_row(const uint8_t* row, int64_t blocks, const float* x, int64_t x_stride, float* y, int64_t y_stride) {
  using V = typename S::V;
  // Two accumulators per token, alternating by sub-block, break the FMA chain.
  V acc[kTokens][2];
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) acc[t][0] = acc[t][1] = S::zero();
  // Unpacked one block ahead, so a block's 16-byte loads do not wait on its
  // own 8-byte stores (a load spanning two stores in flight cannot be forwarded).
  alignas(64) uint8_t unpacked[2][kQ6_KBlockSize];
  const int64_t block_bytes = static_cast<int64_t>(sizeof(BlockQ6_K));
  // A lane type may bring a vector unpack (S::unpack_q6_k); the same bytes either way.
  const auto unpack = [](const uint8_t* block, uint8_t* v) {
    if constexpr (requires { S::unpack_q6_k(block, v); }) {
      S::unpack_q6_k(block, v);
    } else {
      unpack_q6_k(block, v);
    }
  };
  if (blocks > 0) unpack(row, unpacked[0]);
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* block = row + i * block_bytes;
    if (i + 1 < blocks) unpack(block + block_bytes, unpacked[(i + 1) & 1]);
    const uint8_t* v = unpacked[i & 1];
    uint16_t d16;
    std::memcpy(&d16, block + offsetof(BlockQ6_K, d), 2);
    const float d = fp16_to_float(d16);
    const int8_t* scales = reinterpret_cast<const int8_t*>(block + offsetof(BlockQ6_K, scales));
    // Per sub-block j: weight = (d * scale_j) * (v - 32) = v * step[j] + offset[j],
    // exact in one fma (offset = -32 step is exact).
    alignas(64) float step[16], offset[16];
    #pragma GCC unroll 2
    for (int c = 0; c < 16; c += S::kLanes) {
      const V st = S::mul(S::set1(d), S::load_i8(scales + c));
      S::store(step + c, st);
      S::store(offset + c, S::mul(st, S::set1(-32.0f)));
    }
    const float* xb = x + i * kQ6_KBlockSize;
    const auto sub_block = [&](int j, int a) {
      const V vs = S::set1(step[j]), vo = S::set1(offset[j]);
      #pragma GCC unroll 2
      for (int c = 0; c < 16; c += S::kLanes) {
        const V w = S::fmadd(S::load_u8(v + 16 * j + c), vs, vo);
        #pragma GCC unroll 8
        for (int t = 0; t < kTokens; ++t) acc[t][a] = S::fmadd(w, S::load(xb + t * x_stride + 16 * j + c), acc[t][a]);
      }
    };
    // Constant accumulator indices: with a computed one the compiler keeps them in memory.
    #pragma GCC unroll 8
    for (int j = 0; j < 16; j += 2) {
      sub_block(j, 0);
      sub_block(j + 1, 1);
    }
  }
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) y[t * y_stride] = S::reduce_add(S::add(acc[t][0], acc[t][1]));
}

// Row by row, each one sequential stream; tokens in blocks of kFloatTileTokens.
template <class S>
void q6_k_tile_dots(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride, int tokens,
                    int64_t k, float* y, int64_t y_stride) {
  const int64_t blocks = k / kQ6_KBlockSize;
  for (int r = 0; r < rows; ++r) {
    const uint8_t* row = w + r * row_bytes;
    switch (tokens) {
      case 1: q6_k_row<S, 1>(row, blocks, x, x_stride, y + r, y_stride); break;
      case 2: q6_k_row<S, 2>(row, blocks, x, x_stride, y + r, y_stride); break;
      case 3: q6_k_row<S, 3>(row, blocks, x, x_stride, y + r, y_stride); break;
      default: q6_k_row<S, 4>(row, blocks, x, x_stride, y + r, y_stride); break;
    }
  }
}

}  // namespace lowbit::simd
