// The int8 dot-product steps the AVX-512 kernels share. Only for files built with
// this folder's flags; the namespace keeps these apart from the AVX2 twins.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace lowbit::avx512 {

// Four activation bytes repeated in every 32-bit lane.
inline __m512i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// acc += sum of 4 (unsigned u x signed s) byte products per 32-bit lane.
// Without VNNI the int16 pair sums must not saturate: callers keep u small
// (codes 0..3), so |u*s| pairs stay far inside int16.
template <bool kVnni>
inline __m512i dot_u8s8(__m512i acc, __m512i u, __m512i s) {
  if constexpr (kVnni) {
    // In place: with the intrinsic, GCC 12 copies every accumulator once per
    // step (vmovdqa32 x 2 per vpdpbusd), which fills the front end.
    asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(s));
    return acc;
  } else {
    const __m512i pairs = _mm512_maddubs_epi16(u, s);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
  }
}

// dot_u8s8(acc, u, broadcast4(p)) with the broadcast folded into vpdpbusd's
// memory operand ({1to16}): one instruction instead of a vpbroadcastd and a
// vpdpbusd; the tl2v loop, short of instruction slots, ran 2-7% faster with it
// on cold weights (docs/performance.md).
template <bool kVnni>
inline __m512i dot_u8s8_broadcast(__m512i acc, __m512i u, const int8_t* p) {
  if constexpr (kVnni) {
    asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*reinterpret_cast<const int32_t*>(p)));
    return acc;
  } else {
    return dot_u8s8<false>(acc, u, broadcast4(p));
  }
}

}  // namespace lowbit::avx512
