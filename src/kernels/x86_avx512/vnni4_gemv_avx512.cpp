// The up-convert-and-compute GEMV kernels on AVX-512 VNNI: one row block of 16
// rows (one zmm of int32 accumulators) times one token. Layout: vnni4_layout.h.
#include <immintrin.h>

#include <cstring>

#include "kernels/vnni4_layout.h"

// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here reads them.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lowbit {

namespace {

inline __m512i broadcast4(const int8_t* x) {
  int32_t v;
  std::memcpy(&v, x, 4);
  return _mm512_set1_epi32(v);
}

// d * I rounded to float on its own, as the reference does: g++ fuses a
// multiply and an add into an FMA by default (-ffp-contract=fast in C++),
// which would round once and differ from the reference in the last bit.
inline __m512 rounded_product(__m512 a, __m512 b) {
  __m512 p = _mm512_mul_ps(a, b);
  __asm__("" : "+v"(p));
  return p;
}

// acc + d_g * float(I_g) with I_g = D_g + xsum_factor * S_g (mul then add, as the reference).
inline __m512 add_group(__m512 acc, __m512i d_sum, const Vnni4Task& t, int64_t g) {
  const __m512i isum = _mm512_add_epi32(d_sum, _mm512_set1_epi32(t.xsum_factor * t.xsum[g]));
  const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(t.scales + g * kVnni4Rows)));
  return _mm512_add_ps(acc, rounded_product(d, _mm512_cvtepi32_ps(isum)));
}

inline void prefetch(const uint8_t* p) {
  _mm_prefetch(reinterpret_cast<const char*>(p + kVnni4PrefetchBytes), _MM_HINT_T0);
}

inline void store_out(const Vnni4Task& t, __m512 acc) { _mm512_store_ps(t.out, _mm512_mul_ps(acc, _mm512_set1_ps(t.inv))); }

}  // namespace

// One 64-byte load = 16 rows x 16 k of 2-bit codes; two nibble-table shuffles
// per nibble turn it into four VNNI4 vectors of u (the paper's 1 shift + 2 and
// + 4 vpshufb), each meeting its 4 broadcast activations in one vpdpbusd.
void int2_gemv_avx512(const Vnni4Task& t) {
  const __m512i lut01 = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.lut)));
  const __m512i lut23 = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.lut + 16)));
  const __m512i nibble = _mm512_set1_epi8(0x0f);
  const uint8_t* c = t.codes;
  const int8_t* x = t.x;
  __m512 acc = _mm512_setzero_ps();
  for (int64_t g = 0; g < t.groups; ++g) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t s = 0; s < t.steps_per_group; ++s, c += 64, x += 16) {
      prefetch(c);
      const __m512i w = _mm512_load_si512(c);
      const __m512i lo = _mm512_and_si512(w, nibble);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi32(w, 4), nibble);
      a0 = _mm512_dpbusd_epi32(a0, _mm512_shuffle_epi8(lut01, lo), broadcast4(x));
      a1 = _mm512_dpbusd_epi32(a1, _mm512_shuffle_epi8(lut23, lo), broadcast4(x + 4));
      a2 = _mm512_dpbusd_epi32(a2, _mm512_shuffle_epi8(lut01, hi), broadcast4(x + 8));
      a3 = _mm512_dpbusd_epi32(a3, _mm512_shuffle_epi8(lut23, hi), broadcast4(x + 12));
    }
    acc = add_group(acc, _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)), t, g);
  }
  store_out(t, acc);
}

// 8 bytes = 16 rows x 4 k of sign bits: the 64 bits become a mask register and
// a zero-masked move of ones expands them to bytes u = bit (0/1); I = 2D - S.
void int1_gemv_avx512(const Vnni4Task& t) {
  const __m512i ones = _mm512_set1_epi8(1);
  const uint8_t* c = t.codes;
  const int8_t* x = t.x;
  __m512 acc = _mm512_setzero_ps();
  auto expand = [&](int i) {
    uint64_t bits;
    std::memcpy(&bits, c + 8 * i, 8);
    return _mm512_maskz_mov_epi8(_cvtu64_mask64(bits), ones);
  };
  for (int64_t g = 0; g < t.groups; ++g) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t s = 0; s < t.steps_per_group; s += 4, c += 32, x += 16) {
      prefetch(c);
      a0 = _mm512_dpbusd_epi32(a0, expand(0), broadcast4(x));
      a1 = _mm512_dpbusd_epi32(a1, expand(1), broadcast4(x + 4));
      a2 = _mm512_dpbusd_epi32(a2, expand(2), broadcast4(x + 8));
      a3 = _mm512_dpbusd_epi32(a3, expand(3), broadcast4(x + 12));
    }
    const __m512i d = _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3));
    acc = add_group(acc, _mm512_slli_epi32(d, 1), t, g);
  }
  store_out(t, acc);
}

// 64 bytes = 16 rows x 4 k of u = w + 128; I = D - 128 S.
void q8_0_gemv_avx512(const Vnni4Task& t) {
  const uint8_t* c = t.codes;
  const int8_t* x = t.x;
  __m512 acc = _mm512_setzero_ps();
  auto load = [&](int i) { return _mm512_load_si512(c + 64 * i); };
  for (int64_t g = 0; g < t.groups; ++g) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t s = 0; s < t.steps_per_group; s += 4, c += 256, x += 16) {
      for (int i = 0; i < 4; ++i) prefetch(c + 64 * i);
      a0 = _mm512_dpbusd_epi32(a0, load(0), broadcast4(x));
      a1 = _mm512_dpbusd_epi32(a1, load(1), broadcast4(x + 4));
      a2 = _mm512_dpbusd_epi32(a2, load(2), broadcast4(x + 8));
      a3 = _mm512_dpbusd_epi32(a3, load(3), broadcast4(x + 12));
    }
    acc = add_group(acc, _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)), t, g);
  }
  store_out(t, acc);
}

}  // namespace lowbit
