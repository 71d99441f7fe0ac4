// The int8 dot-product steps the AVX2 kernels share. Only for files built with
// this folder's flags; the namespace keeps these apart from the AVX-512 twins.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace lowbit::avx2 {

// Four activation bytes repeated in every 32-bit lane.
inline __m256i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// acc += sum of 4 (unsigned u x signed s) byte products per 32-bit lane.
// Without VNNI the int16 pair sums must not saturate: callers keep u small
// (codes 0..3), so |u*s| pairs stay far inside int16.
template <bool kVnni>
inline __m256i dot_u8s8(__m256i acc, __m256i u, __m256i s) {
  if constexpr (kVnni) {
    // In place, as in the AVX-512 twin (GCC 12 copies the accumulator around
    // the intrinsic). {vex}: the AVX-VNNI encoding, not AVX512-VNNI's EVEX one.
    asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(u), "x"(s));
    return acc;
  } else {
    const __m256i pairs = _mm256_maddubs_epi16(u, s);
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
}

}  // namespace lowbit::avx2
