// 16 float lanes of a zmm, as the ISA-neutral op bodies (kernels/simd_body_*.h)
// expect them. Included only by files built with AVX-512 flags.
#pragma once

// GCC 12's AVX-512 headers trip -Wuninitialized on their own
// _mm512_undefined_* placeholders once inlined; the warning is about the header.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstdint>

#include "kernels/simd_lanes.h"

namespace lowbit::simd {

// The 128 6-bit values (0..63) of half-block h of a Q6_K block (quant/q6_k.h's
// layout) as bytes: lo = values 0-63, hi = values 64-127. One 64-byte load of
// ql gives the low nibbles of 0-63 and the high nibbles of 64-127; qh's 32
// bytes, shifted by 0/2 and 4/6 into the two 256-bit halves, give their top 2 bits.
inline void q6_k_half_values(const uint8_t* block, int h, __m512i& lo, __m512i& hi) {
  const __m512i low4 = _mm512_set1_epi8(0x0f), top2 = _mm512_set1_epi8(0x30);
  const __m512i ql = _mm512_loadu_si512(block + 64 * h);
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 128 + 32 * h));
  // (qh >> s) << 4 = qh << (4 - s) for s = 0, 2; then >> for s = 4, 6.
  const __m512i h01 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_slli_epi16(qh, 4)), _mm256_slli_epi16(qh, 2), 1);
  const __m512i h23 = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
  lo = _mm512_or_si512(_mm512_and_si512(ql, low4), _mm512_and_si512(h01, top2));
  hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4), _mm512_and_si512(h23, top2));
}

struct Avx512 {
  using V = __m512;
  static constexpr int kLanes = 16;
  static constexpr const char* kName = "avx512";

  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float v) { return _mm512_set1_ps(v); }
  // p[0], p[1] in the even and odd lanes (one 64-bit broadcast load).
  static V set1_pair(const float* p) {
    double pair;
    __builtin_memcpy(&pair, p, sizeof(pair));
    return _mm512_castpd_ps(_mm512_set1_pd(pair));
  }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  // The first n (< kLanes) lanes; the rest read as 0 / are left alone.
  static __mmask16 mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
  static V load_partial(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store_partial(float* p, V v, int64_t n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static V load_f16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static V load_f16_partial(const uint16_t* p, int64_t n) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask(n), p)); }
  static V load_bf16(const uint16_t* p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  }
  static V load_bf16_partial(const uint16_t* p, int64_t n) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask(n), p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  }
  // Round to nearest even, as float_to_fp16 does.
  static void store_f16(uint16_t* p, V v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static void store_f16_partial(uint16_t* p, V v, int64_t n) {
    _mm256_mask_storeu_epi16(p, mask(n), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  // kLanes bytes (0..255) as floats.
  static V load_u8(const uint8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  // kLanes signed bytes as floats.
  static V load_i8(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0); }

  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }  // a * b + c
  static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a * b
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V abs(V a) { return _mm512_abs_ps(a); }
  static V floor(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  // x with a's lanes where a > b, else 0.
  static V select_gt(V a, V b, V x) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), x); }
  // 2^n for integer-valued n in [-126, 127].
  static V pow2(V n) {
    const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
  }
  // Integer lanes (int32), for int8 quantization.
  using I = __m512i;
  static I to_i32(V a) { return _mm512_cvtps_epi32(a); }  // a integer-valued: exact
  // a to the nearest integer, halves away from zero (std::round), for |a| < 2^23:
  // see simd::kHalfBelow.
  static I round_half_away(V a) {
    const __m512 sign = _mm512_and_ps(a, _mm512_castsi512_ps(_mm512_set1_epi32(INT32_MIN)));
    return _mm512_cvttps_epi32(_mm512_add_ps(a, _mm512_or_ps(sign, _mm512_set1_ps(kHalfBelow))));
  }
  static I add_i32(I a, I b) { return _mm512_add_epi32(a, b); }
  static I zero_i32() { return _mm512_setzero_si512(); }
  static int32_t reduce_add_i32(I a) { return _mm512_reduce_add_epi32(a); }
  // Sum of n int8. psadbw adds 8 unsigned bytes, so each byte is moved to
  // unsigned by flipping its top bit (+128), taken off at the end; the bytes
  // past n of the last, masked load stay 0.
  static int32_t sum_i8(const int8_t* p, int64_t n) {
    const __m512i flip = _mm512_set1_epi8(-128);
    __m512i acc = _mm512_setzero_si512();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
      acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_xor_si512(_mm512_loadu_si512(p + i), flip), _mm512_setzero_si512()));
    if (i < n) {
      const __mmask64 m = _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(n - i));
      const __m512i v = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, p + i), flip));
      acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, _mm512_setzero_si512()));
    }
    return static_cast<int32_t>(_mm512_reduce_add_epi64(acc) - 128 * n);
  }
  // Lanes in [-128, 127] to bytes.
  static void store_i8(int8_t* p, I a) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(a)); }
  static void store_i8_partial(int8_t* p, I a, int64_t n) { _mm512_mask_cvtepi32_storeu_epi8(p, mask(n), a); }

  static float reduce_add(V a) { return _mm512_reduce_add_ps(a); }
  // out[i] = the sum of the lanes of the i-th vector: the four reductions share
  // their shuffles (15 instructions, against ~36 for four reduce_add).
  static void reduce_add4(V a, V b, V c, V d, float* out) {
    // 128-bit quarters: [a0 + a2, a1 + a3, b0 + b2, b1 + b3], then one quarter per vector.
    const V ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
    const V cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xEE));
    V s = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xDD));
    s = _mm512_add_ps(s, _mm512_permute_ps(s, 0x4E));  // within each quarter: pairs
    s = _mm512_add_ps(s, _mm512_permute_ps(s, 0xB1));  // then neighbours: every lane holds its quarter's sum
    const __m512i first_of_quarters = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    _mm_storeu_ps(out, _mm512_castps512_ps128(_mm512_permutexvar_ps(first_of_quarters, s)));
  }
  static float reduce_max(V a) { return _mm512_reduce_max_ps(a); }
  // The lanes widened to double, then summed.
  static double reduce_add_f64(V a) {
    const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(a));
    const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
    return _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
  }
  // The 16 x 16 tile r[row] lane col becomes r[col] lane row: pairs of rows
  // interleaved, then quads (as doubles), then 128-bit quarters.
  static void transpose(V (&r)[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // u[4i + c], quarter k: column 4k + c of rows 4i .. 4i + 3.
    __m512 u[16];
    for (int i = 0; i < 4; ++i) {
      const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
      const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
      u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
      u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
      u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
    }
    for (int c = 0; c < 4; ++c) {
      const __m512 even01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88), odd01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
      const __m512 even23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
      const __m512 odd23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
      r[c] = _mm512_shuffle_f32x4(even01, even23, 0x88);
      r[8 + c] = _mm512_shuffle_f32x4(even01, even23, 0xDD);
      r[4 + c] = _mm512_shuffle_f32x4(odd01, odd23, 0x88);
      r[12 + c] = _mm512_shuffle_f32x4(odd01, odd23, 0xDD);
    }
  }
};

}  // namespace lowbit::simd
