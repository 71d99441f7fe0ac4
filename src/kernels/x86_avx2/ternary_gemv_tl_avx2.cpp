// TL1 / TL2 table lookups with 256-bit vectors: a 64-row tile is done as two
// halves of 32 rows (index bytes 0-31, then 32-63). vpshufb looks up, vpunpck
// widens to int16, and TL2's sign bits become int16 masks m (0 or -1) applied
// as v = (v + m) ^ m (the bitnet.cpp paper's sign trick: -v = (v - 1) ^ -1).
#include <immintrin.h>

#include <cstring>

#include "kernels/tl_tile_dots.h"
#include "kernels/tl_tiles.h"

namespace lowbit {

namespace {

// Steps between widenings of the int16 sums: 2 groups x 3 x 128 per step, so
// 42 steps stay below 32768.
constexpr int64_t kStepsPerWidening = 42;
constexpr int64_t kPrefetchBytes = 1024;

struct Sums {
  __m256i lo16 = _mm256_setzero_si256(), hi16 = _mm256_setzero_si256();
  __m256i s32[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};

  void widen() {
    s32[0] = _mm256_add_epi32(s32[0], _mm256_cvtepi16_epi32(_mm256_castsi256_si128(lo16)));
    s32[1] = _mm256_add_epi32(s32[1], _mm256_cvtepi16_epi32(_mm256_extracti128_si256(lo16, 1)));
    s32[2] = _mm256_add_epi32(s32[2], _mm256_cvtepi16_epi32(_mm256_castsi256_si128(hi16)));
    s32[3] = _mm256_add_epi32(s32[3], _mm256_cvtepi16_epi32(_mm256_extracti128_si256(hi16, 1)));
    lo16 = hi16 = _mm256_setzero_si256();
  }
};

template <bool kLossless>
inline void lookup(__m256i nib, const uint8_t* table, __m256i& lo, __m256i& hi) {
  const __m256i low_bytes =
      _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table))), nib);
  __m256i high_bytes;
  if constexpr (kLossless) {
    high_bytes = _mm256_shuffle_epi8(
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16))), nib);
  } else {
    high_bytes = _mm256_cmpgt_epi8(_mm256_setzero_si256(), low_bytes);  // sign extension
  }
  lo = _mm256_unpacklo_epi8(low_bytes, high_bytes);
  hi = _mm256_unpackhi_epi8(low_bytes, high_bytes);
}

// 0 or -1 per int16 lane from 16 sign bits.
inline __m256i sign_mask(uint32_t bits16) {
  const __m256i lane_bit = _mm256_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384,
                                             static_cast<int16_t>(-32768));
  const __m256i b = _mm256_and_si256(_mm256_set1_epi16(static_cast<int16_t>(bits16)), lane_bit);
  return _mm256_cmpeq_epi16(b, lane_bit);
}

inline __m256i apply_sign(__m256i v, __m256i m) { return _mm256_xor_si256(_mm256_add_epi16(v, m), m); }

// One half (32 rows) of a tile: adds the groups of `steps` steps.
template <bool kLossless, bool kSigned>
void add_steps(Sums& sums, int half, const uint8_t* idx, const uint8_t* signs, int64_t steps, const uint8_t* lut) {
  constexpr int64_t kTableBytes = kLossless ? 32 : 16;
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  for (int64_t s0 = 0; s0 < steps; s0 += kStepsPerWidening) {
    const int64_t s_end = s0 + kStepsPerWidening < steps ? s0 + kStepsPerWidening : steps;
    for (int64_t s = s0; s < s_end; ++s) {
      // The index and sign planes are two streams a tile apart: help the prefetcher.
      _mm_prefetch(reinterpret_cast<const char*>(idx + 64 * s + kPrefetchBytes), _MM_HINT_T0);
      if constexpr (kSigned) _mm_prefetch(reinterpret_cast<const char*>(signs + 16 * s + kPrefetchBytes), _MM_HINT_T0);
      const __m256i bytes = _mm256_load_si256(reinterpret_cast<const __m256i*>(idx + 64 * s + 32 * half));
      const __m256i nibs[2] = {_mm256_and_si256(bytes, low4), _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4)};
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        __m256i lo, hi;
        lookup<kLossless>(nibs[h], lut + (2 * s + h) * kTableBytes, lo, hi);
        if constexpr (kSigned) {
          uint64_t word;
          std::memcpy(&word, signs + 16 * s + 8 * h, 8);
          // This half's lanes: bits 16*half.. of the lo word and of the hi word.
          lo = apply_sign(lo, sign_mask(static_cast<uint32_t>(word >> (16 * half)) & 0xffff));
          hi = apply_sign(hi, sign_mask(static_cast<uint32_t>(word >> (32 + 16 * half)) & 0xffff));
        }
        sums.lo16 = _mm256_add_epi16(sums.lo16, lo);
        sums.hi16 = _mm256_add_epi16(sums.hi16, hi);
      }
    }
    sums.widen();
  }
}

template <bool kLossless>
void tile_dots(const TlTileTask& t) {
  constexpr int64_t kTableBytes = kLossless ? 32 : 16;
  for (int half = 0; half < 2; ++half) {
    Sums sums;
    add_steps<kLossless, true>(sums, half, t.tile, t.tile + t.sign_offset, t.tl2_steps, t.lut);
    add_steps<kLossless, false>(sums, half, t.tile + t.tl1_offset, nullptr, t.tl1_steps,
                                t.lut + 2 * t.tl2_steps * kTableBytes);
    alignas(32) int32_t lanes[32];  // [lo lanes 0-15 of this half][hi lanes 0-15]
    for (int i = 0; i < 4; ++i) _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + 8 * i), sums.s32[i]);
    for (int vec = 0; vec < 2; ++vec)
      for (int lane = 0; lane < 16; ++lane) t.out[tl_row_of_lane(vec, 16 * half + lane)] = lanes[16 * vec + lane];
  }
}

}  // namespace

TlTileDots tl_tile_dots_avx2(bool lossless) { return lossless ? tile_dots<true> : tile_dots<false>; }

}  // namespace lowbit
