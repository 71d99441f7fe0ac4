// 8 float lanes of a ymm (AVX2 + FMA + F16C), as the ISA-neutral op bodies
// (kernels/simd_body_*.h) expect them. Included only by files built with AVX2 flags.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/simd_lanes.h"

namespace lowbit::simd {

struct Avx2 {
  using V = __m256;
  static constexpr int kLanes = 8;
  static constexpr const char* kName = "avx2";

  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float v) { return _mm256_set1_ps(v); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  // Lanes i < n all ones, for maskload / maskstore (n < kLanes).
  static __m256i mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V load_partial(const float* p, int64_t n) { return _mm256_maskload_ps(p, mask(n)); }
  static void store_partial(float* p, V v, int64_t n) { _mm256_maskstore_ps(p, mask(n), v); }
  static V load_f16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static V load_f16_partial(const uint16_t* p, int64_t n) {
    uint16_t tmp[kLanes] = {};
    std::memcpy(tmp, p, static_cast<size_t>(n) * 2);
    return load_f16(tmp);
  }
  static V load_bf16(const uint16_t* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  static V load_bf16_partial(const uint16_t* p, int64_t n) {
    uint16_t tmp[kLanes] = {};
    std::memcpy(tmp, p, static_cast<size_t>(n) * 2);
    return load_bf16(tmp);
  }
  // Round to nearest even, as float_to_fp16 does.
  static void store_f16(uint16_t* p, V v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static void store_f16_partial(uint16_t* p, V v, int64_t n) {
    uint16_t tmp[kLanes];
    store_f16(tmp, v);
    std::memcpy(p, tmp, static_cast<size_t>(n) * 2);
  }
  // kLanes bytes (0..255) as floats.
  static V load_u8(const uint8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  // kLanes signed bytes as floats.
  static V load_i8(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0); }

  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }  // a * b + c
  static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a * b
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V floor(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  // x with a's lanes where a > b, else 0.
  static V select_gt(V a, V b, V x) { return _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), x); }
  // 2^n for integer-valued n in [-126, 127].
  static V pow2(V n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  // Integer lanes (int32), for int8 quantization.
  using I = __m256i;
  static I to_i32(V a) { return _mm256_cvtps_epi32(a); }  // a integer-valued: exact
  // a to the nearest integer, halves away from zero (std::round), for |a| < 2^23:
  // see simd::kHalfBelow.
  static I round_half_away(V a) {
    const __m256 sign = _mm256_and_ps(a, _mm256_set1_ps(-0.0f));
    return _mm256_cvttps_epi32(_mm256_add_ps(a, _mm256_or_ps(sign, _mm256_set1_ps(kHalfBelow))));
  }
  static I add_i32(I a, I b) { return _mm256_add_epi32(a, b); }
  static I zero_i32() { return _mm256_setzero_si256(); }
  // Sum of n int8 (n a multiple of 16). psadbw adds 8 unsigned bytes, so each
  // byte is moved to unsigned by flipping its top bit (+128), taken off at the end.
  static int32_t sum_i8(const int8_t* p, int64_t n) {
    const __m256i flip = _mm256_set1_epi8(-128);
    __m256i acc = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
      acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)), flip),
                                                  _mm256_setzero_si256()));
    __m128i s = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    if (i < n)
      s = _mm_add_epi64(s, _mm_sad_epu8(_mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)),
                                                      _mm256_castsi256_si128(flip)),
                                        _mm_setzero_si128()));
    return static_cast<int32_t>(_mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1) - 128 * n);
  }
  static int32_t reduce_add_i32(I a) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
  }
  // Lanes in [-128, 127] to bytes (the packs never saturate).
  static __m128i pack_i8(I a) {
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    return _mm_packs_epi16(w, w);
  }
  static void store_i8(int8_t* p, I a) { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), pack_i8(a)); }
  static void store_i8_partial(int8_t* p, I a, int64_t n) {
    int8_t tmp[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tmp), pack_i8(a));
    std::memcpy(p, tmp, static_cast<size_t>(n));
  }

  static float reduce_add(V a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // out[i] = the sum of the lanes of the i-th vector (three horizontal adds shared by the four).
  static void reduce_add4(V a, V b, V c, V d, float* out) {
    const V abcd = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
  }
  // The lanes widened to double, then summed.
  static double reduce_add_f64(V a) {
    const __m256d s = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(a)), _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)));
    const __m128d t = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(t, _mm_unpackhi_pd(t, t)));
  }
  static float reduce_max(V a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // The 8 x 8 tile r[row] lane col becomes r[col] lane row.
  static void transpose(V (&r)[8]) {
    __m256 s[8];
    for (int h = 0; h < 8; h += 4) {
      const __m256 t0 = _mm256_unpacklo_ps(r[h], r[h + 1]), t1 = _mm256_unpackhi_ps(r[h], r[h + 1]);
      const __m256 t2 = _mm256_unpacklo_ps(r[h + 2], r[h + 3]), t3 = _mm256_unpackhi_ps(r[h + 2], r[h + 3]);
      s[h] = _mm256_shuffle_ps(t0, t2, 0x44);  // 128-bit half k: column 4k of rows h .. h + 3
      s[h + 1] = _mm256_shuffle_ps(t0, t2, 0xEE);
      s[h + 2] = _mm256_shuffle_ps(t1, t3, 0x44);
      s[h + 3] = _mm256_shuffle_ps(t1, t3, 0xEE);
    }
    for (int c = 0; c < 4; ++c) {
      r[c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x20);
      r[4 + c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x31);
    }
  }
};

}  // namespace lowbit::simd
