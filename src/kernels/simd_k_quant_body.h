// FloatTileDots (float_tile_dots.h) for Q4_K and Q5_K rows (quant/q4_k.h,
// quant/q5_k.h), written once over a lane type S (x86_avx2/simd_avx2.h,
// x86_avx512/simd_avx512.h): each weight exactly as dequantize_row_q4_K /
// q5_K gives it (a multiply and a subtract, each rounded), times float
// activations. The two formats differ only in how the values unpack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "core/half.h"
#include "kernels/float_tile_dots.h"
#include "kernels/simd_block_sums.h"
#include "quant/q4_k.h"
#include "quant/q5_k.h"

namespace lowbit::simd {

// A super-block's 256 values less kCenter (the middle of their range) into
// signed bytes, 64 (a sub-block pair) per step.
struct Q4KValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ4_K);
  static constexpr int kCenter = 8;
  static void unpack(const uint8_t* block, int8_t* v /* [256] */) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), center = _mm256_set1_epi8(kCenter);
    const uint8_t* qs = block + offsetof(BlockQ4_K, qs);
    #pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * p));
      _mm256_store_si256(reinterpret_cast<__m256i*>(v + 64 * p), _mm256_sub_epi8(_mm256_and_si256(q, low4), center));
      _mm256_store_si256(reinterpret_cast<__m256i*>(v + 64 * p + 32),
                         _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), center));
    }
  }
};

// Q4_K's nibbles plus bit 4 from qh: sub-block j's bit is bit j of each qh
// byte, moved to bit 4 (move_bit).
struct Q5KValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ5_K);
  static constexpr int kCenter = 16;
  template <int kPair>
  static void unpack_pair(const uint8_t* qs, __m256i qh, __m256i low4, int8_t* v) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * kPair));
    const __m256i center = _mm256_set1_epi8(kCenter);
    _mm256_store_si256(reinterpret_cast<__m256i*>(v + 64 * kPair),
                       _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(q, low4), move_bit<2 * kPair, 4>(qh)), center));
    _mm256_store_si256(
        reinterpret_cast<__m256i*>(v + 64 * kPair + 32),
        _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), move_bit<2 * kPair + 1, 4>(qh)),
                        center));
  }
  static void unpack(const uint8_t* block, int8_t* v /* [256] */) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const uint8_t* qs = block + offsetof(BlockQ5_K, qs);
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ5_K, qh)));
    unpack_pair<0>(qs, qh, low4, v);
    unpack_pair<1>(qs, qh, low4, v);
    unpack_pair<2>(qs, qh, low4, v);
    unpack_pair<3>(qs, qh, low4, v);
  }
};

// Q4_K and Q5_K share d, dmin and scales at the block's start.
static_assert(offsetof(BlockQ4_K, dmin) == offsetof(BlockQ4_K, d) + 2 && offsetof(BlockQ4_K, d) == offsetof(BlockQ5_K, d) &&
              offsetof(BlockQ4_K, dmin) == offsetof(BlockQ5_K, dmin) &&
              offsetof(BlockQ4_K, scales) == offsetof(BlockQ5_K, scales));

// A block's eight sub-block steps d * sc[j] and offsets dmin * m[j], each
// rounded to float as dequantize_k_block rounds them, as 8-lane vectors. The
// 6-bit fields unpack with word operations (quant/q4_k.h has the layout):
//   sc[0..3] = scales[0..3] & 63            m[0..3] = scales[4..7] & 63
//   sc[4..7] = scales[8..11] & 15 | (scales[0..3] >> 6) << 4
//   m[4..7]  = scales[8..11] >> 4 | (scales[4..7] >> 6) << 4
// Both builds that include this body have AVX2, whose 8 lanes fit 8 sub-blocks.
inline void k_quant_steps(const uint8_t* block, __m256* step, __m256* offset) {
  // d and dmin, adjacent fp16 at the block's start, converted together (F16C).
  uint32_t d_dmin;
  std::memcpy(&d_dmin, block + offsetof(BlockQ4_K, d), 4);
  const __m128 scale = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(d_dmin)));
  uint32_t w[3];
  std::memcpy(w, block + offsetof(BlockQ4_K, scales), 12);
  constexpr uint32_t kLow6 = 0x3f3f3f3fu, kLow4 = 0x0f0f0f0fu, kTop2 = 0x03030303u;
  const uint64_t sc = (w[0] & kLow6) | static_cast<uint64_t>((w[2] & kLow4) | (w[0] >> 6 & kTop2) << 4) << 32;
  const uint64_t m = (w[1] & kLow6) | static_cast<uint64_t>((w[2] >> 4 & kLow4) | (w[1] >> 6 & kTop2) << 4) << 32;
  const auto to_floats = [](uint64_t bytes) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(bytes))));
  };
  *step = _mm256_mul_ps(_mm256_broadcastss_ps(scale), to_floats(sc));
  *offset = _mm256_mul_ps(_mm256_broadcastss_ps(_mm_movehdup_ps(scale)), to_floats(m));
}

// Sub-block j (32 values q_l, centred as v_l = q_l - c) contributes
//   sum_l (step_j q_l - offset_j) x_l = step_j * sum_l v_l x_l + (c step_j - offset_j) * xsum_j,
// with step_j = d * sc[j] and offset_j = dmin * m[j] rounded to float as the
// dequantization rounds them, and xsum_j the sum of the sub-block's x (one per
// token, computed once per matmul call). Factored so, a weight costs one
// convert and one fma per token instead of a convert, a multiply, a subtract
// and an fma; the rounding of step_j * q_l (the dequantized weight's own
// rounding) is left out. Centring keeps both terms near the weights' own
// size: with q_l itself, step_j * sum q_l x_l and offset_j * xsum_j can be
// many times the result and cancel, and their rounding with them.
template <class S, class Values, int kTokens>
void k_quant_row(const uint8_t* row, int64_t blocks, const float* x, int64_t x_stride, const float* xsum, float* y,
                 int64_t y_stride) {
  const int64_t xsum_stride = x_stride / 32;
  BlockTotals<S, kTokens> totals;
  __m256 biases[kTokens];  // per sub-block lane: (c step - offset) times the x sums
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) biases[t] = _mm256_setzero_ps();
  for_each_unpacked_block<Values, 256>(row, blocks, [&](int64_t i, const uint8_t* block, const int8_t* v) {
    __m256 steps, offsets;
    k_quant_steps(block, &steps, &offsets);
    // c step is exact (c a power of two), the difference rounded once.
    const __m256 bias = _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(Values::kCenter), steps), offsets);
    alignas(32) float step[8];
    _mm256_store_ps(step, steps);
    totals.template add_runs<32, 8>(v, x + i * 256, x_stride, step);
    #pragma GCC unroll 8
    for (int t = 0; t < kTokens; ++t)
      biases[t] = _mm256_fmadd_ps(bias, _mm256_loadu_ps(xsum + t * xsum_stride + i * 8), biases[t]);
  });
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) y[t * y_stride] = totals.sum(t) + sum_lanes(biases[t]);
}

// A row of `blocks` blocks into floats exactly as dequantize_row_q4_K / q5_K
// gives them (a multiply and a subtract, each rounded): many tokens multiply
// a tile of rows so dequantized (float_matmul.cpp), the cost shared by all.
template <class S, class Values>
void k_quant_dequantize(const uint8_t* row, int64_t blocks, float* out) {
  alignas(64) int8_t v[256];
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* block = row + i * Values::kBlockBytes;
    Values::unpack(block, v);
    __m256 steps, offsets;
    k_quant_steps(block, &steps, &offsets);
    alignas(32) float step[8], offset[8];
    _mm256_store_ps(step, steps);
    _mm256_store_ps(offset, offsets);
    dequantize_runs<S, 32, 8, true>(v, Values::kCenter, step, offset, out + i * 256);
  }
}

// Row by row, each one sequential stream; tokens in blocks of kFloatTileTokens.
template <class S, class Values>
void k_quant_tile_dots(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride,
                       const float* xsum, int tokens, int64_t k, float* y, int64_t y_stride) {
  const int64_t blocks = k / 256;
  with_token_count(tokens, [&](auto count) {
    for (int r = 0; r < rows; ++r)
      k_quant_row<S, Values, decltype(count)::value>(w + r * row_bytes, blocks, x, x_stride, xsum, y + r, y_stride);
  });
}

}  // namespace lowbit::simd
