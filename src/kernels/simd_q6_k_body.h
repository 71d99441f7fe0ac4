// FloatTileDots (float_tile_dots.h) for Q6_K rows (quant/q6_k.h), written once
// over a lane type S (x86_avx2/simd_avx2.h, x86_avx512/simd_avx512.h): the
// 6-bit values times float activations, summed per sub-block, times the
// sub-block's step. The unpack and the steps use AVX2, which every build
// including this body has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "core/half.h"
#include "kernels/float_tile_dots.h"
#include "quant/q6_k.h"

namespace lowbit::simd {

// A super-block's 256 values minus 32 (-32..31) into signed bytes, 64 per
// step (the bit layout of quant/q6_k.h). The two high bits of element l +
// 32q sit at bits 2q, 2q + 1 of qh[l]; a 16-bit shift by at most 4 places
// and a mask move them to bits 4-5 of the same byte.
inline void unpack_q6_k_centered(const uint8_t* block, int8_t* v /* [256] */) {
  const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30), k32 = _mm256_set1_epi8(32);
  const auto store = [&](int at, __m256i low, __m256i high) {
    const __m256i value = _mm256_or_si256(low, _mm256_and_si256(high, bits45));
    _mm256_store_si256(reinterpret_cast<__m256i*>(v + at), _mm256_sub_epi8(value, k32));
  };
  #pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ6_K, ql) + 64 * h));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ6_K, ql) + 64 * h + 32));
    const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ6_K, qh) + 32 * h));
    store(128 * h, _mm256_and_si256(a, low4), _mm256_slli_epi16(hb, 4));
    store(128 * h + 32, _mm256_and_si256(c, low4), _mm256_slli_epi16(hb, 2));
    store(128 * h + 64, _mm256_and_si256(_mm256_srli_epi16(a, 4), low4), hb);
    store(128 * h + 96, _mm256_and_si256(_mm256_srli_epi16(c, 4), low4), _mm256_srli_epi16(hb, 2));
  }
}

// Sub-block j (16 values) contributes step_j * sum_l (v_l - 32) * x_l, with
// step_j = d * scales[j] rounded to float as the dequantization rounds it.
// Factored so, a weight costs one convert and one fma per token (against a
// convert and two fmas to form each weight first); the rounding of step_j *
// (v_l - 32) (the dequantized weight's own) is left out, an error of the
// order of the float sums' own.
template <class S, int kTokens>
void q6_k_row(const uint8_t* row, int64_t blocks, const float* x, int64_t x_stride, float* y, int64_t y_stride) {
  using V = typename S::V;
  static_assert(S::kLanes <= 16, "a sub-block is 16 values");
  constexpr int kSubBlockVectors = 16 / S::kLanes;
  // Per token kAcc partial totals, taken by sub-block in turn (short fma chains).
  constexpr int kAcc = kTokens == 1 ? 4 : kTokens == 2 ? 2 : 1;
  V total[kTokens][kAcc];
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) {
    #pragma GCC unroll 4
    for (int a = 0; a < kAcc; ++a) total[t][a] = S::zero();
  }
  // Unpacked one block ahead, so a block's loads do not wait on its own stores.
  alignas(64) int8_t unpacked[2][kQ6_KBlockSize];
  const int64_t block_bytes = static_cast<int64_t>(sizeof(BlockQ6_K));
  if (blocks > 0) unpack_q6_k_centered(row, unpacked[0]);
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* block = row + i * block_bytes;
    if (i + 1 < blocks) unpack_q6_k_centered(block + block_bytes, unpacked[(i + 1) & 1]);
    const int8_t* v = unpacked[i & 1];
    uint16_t d16;
    std::memcpy(&d16, block + offsetof(BlockQ6_K, d), 2);
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(d16));
    const int8_t* scales = reinterpret_cast<const int8_t*>(block + offsetof(BlockQ6_K, scales));
    alignas(32) float step[16];
    #pragma GCC unroll 2
    for (int c = 0; c < 16; c += 8)
      _mm256_store_ps(step + c, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                                      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + c))))));
    const float* xb = x + i * kQ6_KBlockSize;
    #pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      V q[kSubBlockVectors];
      #pragma GCC unroll 2
      for (int c = 0; c < kSubBlockVectors; ++c) q[c] = S::load_i8(v + 16 * j + c * S::kLanes);
      const V vs = S::set1(step[j]);
      #pragma GCC unroll 8
      for (int t = 0; t < kTokens; ++t) {
        const float* xt = xb + t * x_stride + 16 * j;
        V dot = S::mul(q[0], S::load(xt));
        #pragma GCC unroll 2
        for (int c = 1; c < kSubBlockVectors; ++c) dot = S::fmadd(q[c], S::load(xt + c * S::kLanes), dot);
        total[t][j % kAcc] = S::fmadd(vs, dot, total[t][j % kAcc]);
      }
    }
  }
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) {
    V sum = total[t][0];
    #pragma GCC unroll 4
    for (int a = 1; a < kAcc; ++a) sum = S::add(sum, total[t][a]);
    y[t * y_stride] = S::reduce_add(sum);
  }
}

// A row of `blocks` blocks into floats exactly as dequantize_row_q6_K gives
// them ((d * scale) * (v - 32), each product rounded), for many tokens' tiles.
template <class S>
void q6_k_dequantize(const uint8_t* row, int64_t blocks, float* out) {
  alignas(64) int8_t v[kQ6_KBlockSize];
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* block = row + i * static_cast<int64_t>(sizeof(BlockQ6_K));
    unpack_q6_k_centered(block, v);
    uint16_t d16;
    std::memcpy(&d16, block + offsetof(BlockQ6_K, d), 2);
    const float d = _cvtsh_ss(d16);
    const int8_t* scales = reinterpret_cast<const int8_t*>(block + offsetof(BlockQ6_K, scales));
    float* o = out + i * kQ6_KBlockSize;
    #pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      const typename S::V vs = S::set1(d * static_cast<float>(scales[j]));
      #pragma GCC unroll 2
      for (int c = 0; c < 16; c += S::kLanes) S::store(o + 16 * j + c, S::mul(S::load_i8(v + 16 * j + c), vs));
    }
  }
}

// Row by row, each one sequential stream; tokens in blocks of kFloatTileTokens.
template <class S>
void q6_k_tile_dots(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride, const float* /* xsum */,
                    int tokens,
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
