// The group and output steps every up-convert GEMV on AVX2 shares
// (vnni4_layout.h): a group's int32 dots into the float sums, the rows' y out.
// Only for files built with this folder's flags.
#pragma once

#include <immintrin.h>

#include "kernels/vnni4_layout.h"

namespace lowbit::avx2 {

// d * I rounded to float on its own, as the reference does: g++ fuses a
// multiply and an add into an FMA by default (-ffp-contract=fast in C++),
// which would round once and differ from the reference in the last bit.
inline __m256 rounded_product(__m256 a, __m256 b) {
  __m256 p = _mm256_mul_ps(a, b);
  __asm__("" : "+x"(p));
  return p;
}

// acc + d_g * float(dot_factor * D_g + xsum_factor * S_g) for one half.
inline __m256 add_group(__m256 acc, __m256i d_sum, int shift, const Vnni4Task& t, int64_t g, int half) {
  const __m256i isum =
      _mm256_add_epi32(_mm256_slli_epi32(d_sum, shift), _mm256_set1_epi32(t.xsum_factor * t.xsum[g]));
  const __m256 d =
      _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(vnni4_group_scales(t, g) + 8 * half)));
  return _mm256_add_ps(acc, rounded_product(d, _mm256_cvtepi32_ps(isum)));
}

inline void prefetch(const uint8_t* p) {
  _mm_prefetch(reinterpret_cast<const char*>(p + kVnni4PrefetchBytes), _MM_HINT_T0);
}

inline void store_out(const Vnni4Task& t, const __m256* acc) {
  const __m256 inv = _mm256_set1_ps(t.inv);
  _mm256_store_ps(t.out, _mm256_mul_ps(acc[0], inv));
  _mm256_store_ps(t.out + 8, _mm256_mul_ps(acc[1], inv));
}

// add_group for kTokens tokens' int32 dots dot(k, h) of group g (shifted
// already where add_group's shift is not 0), the group's scales converted once
// for all: acc[k][h] += d_g * float(dot + x term), the same float operations in
// the same order. acc: float sums in memory.
template <int kTokens, class Dot>
__attribute__((always_inline)) inline void add_group_tokens(const Vnni4Task* tasks, int64_t g, Dot dot,
                                                            float (*acc)[2][8]) {
  const __m128i* scales = reinterpret_cast<const __m128i*>(vnni4_group_scales(tasks[0], g));
  const __m256 dg[2] = {_mm256_cvtph_ps(_mm_load_si128(scales)), _mm256_cvtph_ps(_mm_load_si128(scales + 1))};
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) {
    const __m256i xs = _mm256_set1_epi32(tasks[k].xsum_factor * tasks[k].xsum[g]);
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256 isum = _mm256_cvtepi32_ps(_mm256_add_epi32(dot(k, h), xs));
      _mm256_store_ps(acc[k][h], _mm256_add_ps(_mm256_load_ps(acc[k][h]), rounded_product(dg[h], isum)));
    }
  }
}

template <int kTokens>
void store_tokens(const Vnni4Task* tasks, float (*acc)[2][8]) {
  for (int k = 0; k < kTokens; ++k) {
    const __m256 sums[2] = {_mm256_load_ps(acc[k][0]), _mm256_load_ps(acc[k][1])};
    store_out(tasks[k], sums);
  }
}

}  // namespace lowbit::avx2
