// TL1 / TL2 table lookups on 64-bit Arm (bitnet.cpp's TL kernels, tl_tiles.h):
// a 64-row tile at once, as four vectors of 16 rows (index bytes 16v ..
// 16v + 15). `tbl` looks 16 rows' nibbles up in a group's 16-byte table; the
// int16 entries come back by `zip1` / `zip2` of the low- and high-byte
// lookups (lossless tables) or by widening the int8 entries, in rows
// 16v .. 16v + 7 and 16v + 8 .. 16v + 15: the lanes vpunpck{l,h}bw give
// those rows on x86, so TL2's sign words (tl_tiles.h) read the same way
// here. Bits 8v .. 8v + 7 of a group's word are rows 16v .. 16v + 7, bits
// 32 + 8v .. 32 + 8v + 7 rows 16v + 8 .. 16v + 15. A set bit negates the
// entry as v = (v + m) ^ m with m = -1 (the bitnet.cpp paper's sign trick).
#include <arm_neon.h>

#include <cstring>

#include "kernels/tl_tile_dots.h"
#include "kernels/tl_tiles.h"

namespace lowbit {

namespace {

// Steps between widenings of the int16 sums: 2 groups x 3 x 128 per step, so
// 42 steps stay below 32768.
constexpr int64_t kStepsPerWidening = 42;
constexpr int64_t kPrefetchBytes = 1024;

// A tile's sums: s16[2v] rows 16v .. 16v + 7, s16[2v + 1] rows 16v + 8 ..
// 16v + 15, added into s32 (rows 4i .. 4i + 3) every kStepsPerWidening steps.
struct Sums {
  int16x8_t s16[8];
  int32x4_t s32[16];

  Sums() {
    for (auto& v : s16) v = vdupq_n_s16(0);
    for (auto& v : s32) v = vdupq_n_s32(0);
  }
  void widen() {
    for (int i = 0; i < 8; ++i) {
      s32[2 * i] = vaddw_s16(s32[2 * i], vget_low_s16(s16[i]));
      s32[2 * i + 1] = vaddw_high_s16(s32[2 * i + 1], s16[i]);
      s16[i] = vdupq_n_s16(0);
    }
  }
};

// 0 or -1 per int16 lane from the 8 bits of `byte` (lane l: bit l).
inline int16x8_t sign_mask(uint8_t byte) {
  const uint8x16_t lane_bit = {1, 1, 2, 2, 4, 4, 8, 8, 16, 16, 32, 32, 64, 64, 128, 128};
  return vreinterpretq_s16_u8(vtstq_u8(vdupq_n_u8(byte), lane_bit));
}

inline int16x8_t apply_sign(int16x8_t v, int16x8_t m) { return veorq_s16(vaddq_s16(v, m), m); }

// Group entries of 16 rows' nibbles: rows 0-7 into lo, 8-15 into hi.
template <bool kLossless>
inline void lookup(const uint8_t* table, uint8x16_t nib, int16x8_t& lo, int16x8_t& hi) {
  if constexpr (kLossless) {
    const uint8x16_t low_bytes = vqtbl1q_u8(vld1q_u8(table), nib);
    const uint8x16_t high_bytes = vqtbl1q_u8(vld1q_u8(table + 16), nib);
    lo = vreinterpretq_s16_u8(vzip1q_u8(low_bytes, high_bytes));
    hi = vreinterpretq_s16_u8(vzip2q_u8(low_bytes, high_bytes));
  } else {
    const int8x16_t entries = vqtbl1q_s8(vld1q_s8(reinterpret_cast<const int8_t*>(table)), nib);
    lo = vmovl_s8(vget_low_s8(entries));
    hi = vmovl_high_s8(entries);
  }
}

// Adds the groups of `steps` steps (two groups each: low and high nibbles).
template <bool kLossless, bool kSigned>
void add_steps(Sums& sums, const uint8_t* idx, const uint8_t* signs, int64_t steps, const uint8_t* lut) {
  constexpr int64_t kTableBytes = kLossless ? 32 : 16;
  const uint8x16_t low4 = vdupq_n_u8(0x0f);
  for (int64_t s0 = 0; s0 < steps; s0 += kStepsPerWidening) {
    const int64_t s_end = s0 + kStepsPerWidening < steps ? s0 + kStepsPerWidening : steps;
    for (int64_t s = s0; s < s_end; ++s) {
      // The index and sign planes are two streams a tile apart: help the prefetcher.
      __builtin_prefetch(idx + 64 * s + kPrefetchBytes, 0, 3);
      if constexpr (kSigned) __builtin_prefetch(signs + 16 * s + kPrefetchBytes, 0, 3);
      uint8x16_t bytes[4];
      for (int v = 0; v < 4; ++v) bytes[v] = vld1q_u8(idx + 64 * s + 16 * v);
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const uint8_t* table = lut + (2 * s + h) * kTableBytes;
        uint8_t word[8];
        if constexpr (kSigned) std::memcpy(word, signs + 16 * s + 8 * h, 8);
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
          const uint8x16_t nib = h == 0 ? vandq_u8(bytes[v], low4) : vshrq_n_u8(bytes[v], 4);
          int16x8_t lo, hi;
          lookup<kLossless>(table, nib, lo, hi);
          if constexpr (kSigned) {
            lo = apply_sign(lo, sign_mask(word[v]));
            hi = apply_sign(hi, sign_mask(word[4 + v]));
          }
          sums.s16[2 * v] = vaddq_s16(sums.s16[2 * v], lo);
          sums.s16[2 * v + 1] = vaddq_s16(sums.s16[2 * v + 1], hi);
        }
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
  for (int i = 0; i < 16; ++i) vst1q_s32(t.out + 4 * i, sums.s32[i]);  // rows in order
}

}  // namespace

TlTileDots tl_tile_dots_neon(bool lossless) { return lossless ? tile_dots<true> : tile_dots<false>; }

}  // namespace lowbit
