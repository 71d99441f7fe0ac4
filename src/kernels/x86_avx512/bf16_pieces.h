// Floats and F16 values as sums of bf16 pieces, for the AMX-BF16 kernels
// (tdpbf16ps multiplies bf16 pairs into float sums): an F16 value (11
// significant bits) is two pieces, a float (24) three, each cut exactly from
// the top of what is left. Piece products are exact in float, so a dot
// product of pieces is a float dot product summed in another order.
// Included only by files built with the AMX flags.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/simd_lanes.h"
#include "kernels/x86_avx512/simd_avx512.h"

namespace lowbit {

// x's top 8 significant bits (a bf16 value) as a float, the low 16 bits zero.
inline __m512 top_bf16(__m512 x) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}

// x as N bf16 pieces (floats, low 16 bits zero), largest first: each cut
// takes the top of what is left, and the subtraction is exact. Three hold a
// float, two an f16. The last piece is cut too: it is the rest exactly but
// for a float denormal (a weight near exp's floor of ~1e-38), whose low bits
// would otherwise spill into its pair's other half (pair_bf16).
template <int N>
inline void cut_bf16(__m512 x, __m512 (&piece)[N]) {
  for (int c = 0; c < N; ++c) {
    piece[c] = top_bf16(x);
    x = _mm512_sub_ps(x, piece[c]);
  }
}

// Pieces (floats whose low 16 bits are zero) of 32 values in order, lanes
// 0..15 from lo16 and 16..31 from hi16, as 32 bf16: their high halves.
inline __m512i pack_bf16(__m512 lo16, __m512 hi16) {
  static const __m512i high_halves = [] {
    alignas(64) uint16_t idx[32];
    for (int e = 0; e < 32; ++e) idx[e] = static_cast<uint16_t>(2 * e + 1);
    return _mm512_load_si512(idx);
  }();
  return _mm512_permutex2var_epi16(_mm512_castps_si512(lo16), high_halves, _mm512_castps_si512(hi16));
}

// 32 values (lanes 0..15 from lo16, 16..31 from hi16) as N rows of 32 bf16:
// row c holds every value's piece c (cut_bf16 of each half, packed).
template <int N>
inline void pieces_of_32(__m512 lo16, __m512 hi16, __m512i (&row)[N]) {
  __m512 a[N], b[N];
  cut_bf16(lo16, a);
  cut_bf16(hi16, b);
  for (int c = 0; c < N; ++c) row[c] = pack_bf16(a[c], b[c]);
}

// Pieces of the K index 2i (a) and 2i + 1 (b) of 16 columns as B's 32-bit pairs.
inline __m512i pair_bf16(__m512 a, __m512 b) {
  return _mm512_or_si512(_mm512_castps_si512(b), _mm512_srli_epi32(_mm512_castps_si512(a), 16));
}

// The first n (may be <= 0) values at p (f16 or float) as floats, the rest 0.
template <class T>
inline __m512 load_or_zero(const T* p, int64_t n) {
  if (n <= 0) return _mm512_setzero_ps();
  return simd::load_n<simd::Avx512>(p, std::min<int64_t>(n, 16));
}

}  // namespace lowbit
