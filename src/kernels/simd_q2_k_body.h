// FloatTileDots (float_tile_dots.h) for Q2_K rows (quant/q2_k.h), written
// once over a lane type S (x86_avx2/simd_avx2.h, x86_avx512/simd_avx512.h),
// as simd_k_quant_body.h does for Q4_K and Q5_K: sub-block s (16 values,
// centred as v = q - 2) contributes step_s * sum_l v_l * x_l + (2 step_s -
// offset_s) * xsum_s, with step_s = d * (sc & 15) and offset_s = dmin *
// (sc >> 4) rounded as the dequantization rounds them, and xsum_s the sum of
// the sub-block's 16 x. The unpack and the steps use AVX2, which every build
// including this body has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels/float_tile_dots.h"
#include "kernels/simd_block_sums.h"
#include "quant/q2_k.h"

namespace lowbit::simd {

// A super-block's 256 2-bit values less 2 (-2..1) into signed bytes. Bits
// 2j..2j+1 of qs[32h + l] are element 128h + 32j + l; a 16-bit shift by 2j < 8
// and a mask of each byte's low 2 bits keep every value within its byte.
inline constexpr int kQ2KCenter = 2;
inline void unpack_q2_k(const uint8_t* block, int8_t* v /* [256] */) {
  const __m256i low2 = _mm256_set1_epi8(3), center = _mm256_set1_epi8(kQ2KCenter);
  const auto store = [&](int at, __m256i q) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(v + at), _mm256_sub_epi8(_mm256_and_si256(q, low2), center));
  };
  #pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ2_K, qs) + 32 * h));
    store(128 * h, q);
    store(128 * h + 32, _mm256_srli_epi16(q, 2));
    store(128 * h + 64, _mm256_srli_epi16(q, 4));
    store(128 * h + 96, _mm256_srli_epi16(q, 6));
  }
}

// The block layout as for_each_unpacked_block reads it.
struct Q2KValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ2_K);
  static void unpack(const uint8_t* block, int8_t* v) { unpack_q2_k(block, v); }
};

// The 16 sub-blocks' steps d * (sc & 15) and offsets dmin * (sc >> 4), each
// rounded to float as dequantize_row_q2_K rounds them, 8 per vector.
inline void q2_k_steps(const uint8_t* block, __m256* step /* [2] */, __m256* offset /* [2] */) {
  uint32_t d_dmin;
  std::memcpy(&d_dmin, block + offsetof(BlockQ2_K, d), 4);
  const __m128 scale = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(d_dmin)));
  const __m256 d = _mm256_broadcastss_ps(scale), dmin = _mm256_broadcastss_ps(_mm_movehdup_ps(scale));
  const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + offsetof(BlockQ2_K, scales)));
  const __m128i low4 = _mm_set1_epi8(0x0f);
  const __m128i sc = _mm_and_si128(codes, low4), m = _mm_and_si128(_mm_srli_epi16(codes, 4), low4);
  const auto to_floats = [](__m128i bytes) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)); };
  step[0] = _mm256_mul_ps(d, to_floats(sc));
  step[1] = _mm256_mul_ps(d, to_floats(_mm_srli_si128(sc, 8)));
  offset[0] = _mm256_mul_ps(dmin, to_floats(m));
  offset[1] = _mm256_mul_ps(dmin, to_floats(_mm_srli_si128(m, 8)));
}

static_assert(offsetof(BlockQ2_K, dmin) == offsetof(BlockQ2_K, d) + 2);

template <class S, int kTokens>
void q2_k_row(const uint8_t* row, int64_t blocks, const float* x, int64_t x_stride, const float* xsum, float* y,
              int64_t y_stride) {
  static_assert(S::kLanes <= 16, "a sub-block is 16 values");
  const int64_t xsum_stride = x_stride / 16;
  BlockTotals<S, kTokens> totals;
  __m256 biases[kTokens];  // per sub-block lane: (2 step - offset) times the x sums
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) biases[t] = _mm256_setzero_ps();
  for_each_unpacked_block<Q2KValues, 256>(row, blocks, [&](int64_t i, const uint8_t* block, const int8_t* v) {
    __m256 steps[2], offsets[2];
    q2_k_steps(block, steps, offsets);
    const __m256 two = _mm256_set1_ps(kQ2KCenter);  // 2 step exact, the difference rounded once
    const __m256 bias[2] = {_mm256_sub_ps(_mm256_mul_ps(two, steps[0]), offsets[0]),
                            _mm256_sub_ps(_mm256_mul_ps(two, steps[1]), offsets[1])};
    alignas(32) float step[16];
    _mm256_store_ps(step, steps[0]);
    _mm256_store_ps(step + 8, steps[1]);
    totals.template add_runs<16, 16>(v, x + i * 256, x_stride, step);
    #pragma GCC unroll 8
    for (int t = 0; t < kTokens; ++t) {
      const float* st = xsum + t * xsum_stride + i * 16;
      biases[t] = _mm256_fmadd_ps(bias[0], _mm256_loadu_ps(st), biases[t]);
      biases[t] = _mm256_fmadd_ps(bias[1], _mm256_loadu_ps(st + 8), biases[t]);
    }
  });
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) y[t * y_stride] = totals.sum(t) + sum_lanes(biases[t]);
}

// A row into floats exactly as dequantize_row_q2_K gives them, for many
// tokens' tiles (float_matmul.cpp).
template <class S>
void q2_k_dequantize(const uint8_t* row, int64_t blocks, float* out) {
  alignas(64) int8_t v[256];
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* block = row + i * static_cast<int64_t>(sizeof(BlockQ2_K));
    unpack_q2_k(block, v);
    __m256 steps[2], offsets[2];
    q2_k_steps(block, steps, offsets);
    alignas(32) float step[16], offset[16];
    _mm256_store_ps(step, steps[0]);
    _mm256_store_ps(step + 8, steps[1]);
    _mm256_store_ps(offset, offsets[0]);
    _mm256_store_ps(offset + 8, offsets[1]);
    dequantize_runs<S, 16, 16, true>(v, kQ2KCenter, step, offset, out + i * 256);
  }
}

// Row by row, each one sequential stream; tokens in blocks of kFloatTileTokens.
template <class S>
void q2_k_tile_dots(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride,
                    const float* xsum, int tokens, int64_t k, float* y, int64_t y_stride) {
  const int64_t blocks = k / 256;
  with_token_count(tokens, [&](auto count) {
    for (int r = 0; r < rows; ++r)
      q2_k_row<S, decltype(count)::value>(w + r * row_bytes, blocks, x, x_stride, xsum, y + r, y_stride);
  });
}

}  // namespace lowbit::simd
