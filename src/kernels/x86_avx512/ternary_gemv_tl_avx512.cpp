// TL1 / TL2 table lookups with 512-bit vectors: the 64 index bytes of a step
// (one per row) look up the group's table with vpshufb (the table broadcast to
// the four 128-bit lanes), vpunpck{l,h}bw widen to int16, and TL2's sign bits,
// one mask register per vector, negate with a masked subtract.
#include <immintrin.h>

#include <cstring>

#include "kernels/tl_tile_dots.h"
#include "kernels/tl_tiles.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lowbit {

namespace {

// Steps between widenings of the int16 sums: 2 groups x 3 x 128 per step, so
// 42 steps stay below 32768.
constexpr int64_t kStepsPerWidening = 42;
constexpr int64_t kPrefetchBytes = 1024;

struct Sums {
  __m512i lo16 = _mm512_setzero_si512(), hi16 = _mm512_setzero_si512();
  __m512i s32[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};

  void widen() {
    s32[0] = _mm512_add_epi32(s32[0], _mm512_cvtepi16_epi32(_mm512_castsi512_si256(lo16)));
    s32[1] = _mm512_add_epi32(s32[1], _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(lo16, 1)));
    s32[2] = _mm512_add_epi32(s32[2], _mm512_cvtepi16_epi32(_mm512_castsi512_si256(hi16)));
    s32[3] = _mm512_add_epi32(s32[3], _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(hi16, 1)));
    lo16 = hi16 = _mm512_setzero_si512();
  }
};

// The int16 entries of 64 rows' indices `nib` in one group's table: lo vector
// (rows 0-7 of each 16) and hi vector (rows 8-15 of each 16).
template <bool kLossless>
inline void lookup(__m512i nib, const uint8_t* table, __m512i& lo, __m512i& hi) {
  __m512i low_bytes, high_bytes;
  if constexpr (kLossless) {
    low_bytes = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table))), nib);
    high_bytes =
        _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16))), nib);
  } else {
    low_bytes = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table))), nib);
    high_bytes = _mm512_movm_epi8(_mm512_movepi8_mask(low_bytes));  // sign extension
  }
  lo = _mm512_unpacklo_epi8(low_bytes, high_bytes);
  hi = _mm512_unpackhi_epi8(low_bytes, high_bytes);
}

// Adds the groups of `steps` steps (index plane `idx`, tables from `lut`);
// kSigned: TL2, with its sign plane `signs`.
template <bool kLossless, bool kSigned>
void add_steps(Sums& sums, const uint8_t* idx, const uint8_t* signs, int64_t steps, const uint8_t* lut) {
  constexpr int64_t kTableBytes = kLossless ? 32 : 16;
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  for (int64_t s0 = 0; s0 < steps; s0 += kStepsPerWidening) {
    const int64_t s_end = s0 + kStepsPerWidening < steps ? s0 + kStepsPerWidening : steps;
    for (int64_t s = s0; s < s_end; ++s) {
      // The index and sign planes are two streams a tile apart: help the prefetcher.
      _mm_prefetch(reinterpret_cast<const char*>(idx + 64 * s + kPrefetchBytes), _MM_HINT_T0);
      if constexpr (kSigned) _mm_prefetch(reinterpret_cast<const char*>(signs + 16 * s + kPrefetchBytes), _MM_HINT_T0);
      const __m512i bytes = _mm512_load_si512(idx + 64 * s);
      const __m512i nibs[2] = {_mm512_and_si512(bytes, low4), _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low4)};
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        __m512i lo, hi;
        lookup<kLossless>(nibs[h], lut + (2 * s + h) * kTableBytes, lo, hi);
        if constexpr (kSigned) {
          uint64_t word;
          std::memcpy(&word, signs + 16 * s + 8 * h, 8);
          lo = _mm512_mask_sub_epi16(lo, _cvtu32_mask32(static_cast<uint32_t>(word)), _mm512_setzero_si512(), lo);
          hi = _mm512_mask_sub_epi16(hi, _cvtu32_mask32(static_cast<uint32_t>(word >> 32)), _mm512_setzero_si512(), hi);
        }
        sums.lo16 = _mm512_add_epi16(sums.lo16, lo);
        sums.hi16 = _mm512_add_epi16(sums.hi16, hi);
      }
    }
    sums.widen();
  }
}

template <bool kLossless>
void tile_dots(const TlTileTask& t) {
  constexpr int64_t kTableBytes = kLossless ? 32 : 16;
  Sums sums;
  add_steps<kLossless, true>(sums, t.tile, t.tile + t.sign_offset, t.tl2_steps, t.lut);
  add_steps<kLossless, false>(sums, t.tile + t.tl1_offset, nullptr, t.tl1_steps, t.lut + 2 * t.tl2_steps * kTableBytes);
  alignas(64) int32_t lanes[64];  // [lo lanes 0-31][hi lanes 0-31]
  for (int i = 0; i < 4; ++i) _mm512_store_si512(lanes + 16 * i, sums.s32[i]);
  for (int half = 0; half < 2; ++half)
    for (int lane = 0; lane < 32; ++lane) t.out[tl_row_of_lane(half, lane)] = lanes[32 * half + lane];
}

}  // namespace

TlTileDots tl_tile_dots_avx512(bool lossless) { return lossless ? tile_dots<true> : tile_dots<false>; }

}  // namespace lowbit
