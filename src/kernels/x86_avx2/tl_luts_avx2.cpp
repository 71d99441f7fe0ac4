// The TL tables (tl_luts.h) a group per iteration: the 16 int16 entries of a
// group are sign(w) * a summed over the group's 2 or 3 columns (vpsignw), then
// split into low and high bytes (lossless) or scaled, rounded and narrowed to
// int8 with the same float operations as the portable builder.
#include <immintrin.h>

#include "kernels/tl_tile_dots.h"

namespace lowbit {

namespace {

// The weights of each index as int16 lanes (tl_tiles.h): [column][index].
struct IndexWeightVectors {
  __m256i w[3];
};

IndexWeightVectors triple_weights() {
  alignas(32) int16_t w[3][16] = {};
  for (int i = 0; i < 14; ++i) {
    const int n = i + 13;
    w[0][i] = static_cast<int16_t>(n / 9 - 1);
    w[1][i] = static_cast<int16_t>(n / 3 % 3 - 1);
    w[2][i] = static_cast<int16_t>(n % 3 - 1);
  }
  IndexWeightVectors v;
  for (int c = 0; c < 3; ++c) v.w[c] = _mm256_load_si256(reinterpret_cast<const __m256i*>(w[c]));
  return v;
}

IndexWeightVectors pair_weights() {
  alignas(32) int16_t w[3][16] = {};
  for (int i = 0; i < 9; ++i) {
    w[0][i] = static_cast<int16_t>(i / 3 - 1);
    w[1][i] = static_cast<int16_t>(i % 3 - 1);
  }
  IndexWeightVectors v;
  for (int c = 0; c < 3; ++c) v.w[c] = _mm256_load_si256(reinterpret_cast<const __m256i*>(w[c]));
  return v;
}

inline __m256i entries(const IndexWeightVectors& iw, int a0, int a1, int a2) {
  const __m256i e = _mm256_add_epi16(_mm256_sign_epi16(_mm256_set1_epi16(static_cast<int16_t>(a0)), iw.w[0]),
                                     _mm256_sign_epi16(_mm256_set1_epi16(static_cast<int16_t>(a1)), iw.w[1]));
  return _mm256_add_epi16(e, _mm256_sign_epi16(_mm256_set1_epi16(static_cast<int16_t>(a2)), iw.w[2]));
}

// 16 int16 -> 16 low bytes then 16 high bytes.
inline void store_split(uint8_t* dst, __m256i e) {
  const __m256i by_lane = _mm256_shuffle_epi8(
      e, _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7,
                          9, 11, 13, 15));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute4x64_epi64(by_lane, 0xd8));
}

// 8 entries -> int32 of (e * inv_unit) rounded half away from zero, as the portable builder.
inline __m256i round_scaled(__m128i e8, __m256 inv_unit) {
  const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(e8)), inv_unit);
  const __m256 half = _mm256_or_ps(_mm256_and_ps(v, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(0.5f));
  return _mm256_cvttps_epi32(_mm256_add_ps(v, half));
}

inline void store_int8(uint8_t* dst, __m256i e, __m256 inv_unit) {
  const __m256i lo = round_scaled(_mm256_castsi256_si128(e), inv_unit);
  const __m256i hi = round_scaled(_mm256_extracti128_si256(e, 1), inv_unit);
  const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xd8);  // 16 int16 in order
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                   _mm_packs_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1)));
}

}  // namespace

void build_tl_luts_avx2(const TlLutTask& t) {
  static const IndexWeightVectors triples = triple_weights(), pairs = pair_weights();
  const __m256 inv_unit = _mm256_set1_ps(1.0f / t.unit);
  const int64_t table_bytes = t.lossless ? 32 : 16;
  auto act = [&](int64_t k) { return k < t.cols ? static_cast<int>(t.q[k]) : 0; };
  for (int64_t g = t.g0; g < t.g1; ++g) {
    __m256i e;
    if (g < t.tl2_groups) {
      e = entries(triples, act(3 * g), act(3 * g + 1), act(3 * g + 2));
    } else {
      const int64_t k = t.three_cols + 2 * (g - t.tl2_groups);
      e = entries(pairs, act(k), act(k + 1), 0);
    }
    if (t.lossless) {
      store_split(t.lut + g * table_bytes, e);
    } else {
      store_int8(t.lut + g * table_bytes, e, inv_unit);
    }
  }
}

}  // namespace lowbit
