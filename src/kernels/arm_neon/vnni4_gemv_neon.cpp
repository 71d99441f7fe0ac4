// The up-convert-and-compute GEMV kernels on 64-bit Arm (vnni4_layout.h): one
// row block of 16 rows as four int32x4 quarters (rows 0-3, 4-7, 8-11, 12-15).
// A 64-byte line of the layout is 4 vectors of 4 rows, each 32-bit lane one
// row's 4 consecutive k, so `sdot` with a lane operand multiplies a vector by
// the 4 activations of those k, as vpdpbusd does with a broadcast.
// sdot is signed x signed: the kernels multiply signed weights of the form
// dot_factor * u + bias (q8_0, int2: u - 128; int1: -bit) and correct the
// bias with S_g, so I_g is the format's, exactly (integer sums wrap mod 2^32
// like the reference's int32, and I_g itself fits).
#include <arm_neon.h>

#include <cstdint>

#include "kernels/vnni4_layout.h"
#include "kernels/vnni4_matmul.h"

namespace lowbit {

namespace {

inline void prefetch(const uint8_t* p) { __builtin_prefetch(p + kVnni4PrefetchBytes, 0, 3); }

// factor * S_g broadcast, wrapping like the dots (the terms of I_g are
// exact modulo 2^32 and I_g fits int32).
inline int32x4_t xsum_term(const Vnni4Task& t, int64_t g, int32_t factor) {
  return vdupq_n_s32(static_cast<int32_t>(static_cast<uint32_t>(factor) * static_cast<uint32_t>(t.xsum[g])));
}

// d * I rounded to float on its own, as the reference does: kept out of an
// fmla even where a build lets the compiler contract a multiply and an add.
inline float32x4_t rounded_product(float32x4_t a, float32x4_t b) {
  float32x4_t p = vmulq_f32(a, b);
  __asm__("" : "+w"(p));
  return p;
}

// acc + d_g * float(I_g) for the four quarters, in group order.
inline void add_group(const Vnni4Task& t, int64_t g, const int32x4_t (&isum)[4], float32x4_t (&acc)[4]) {
  const uint16_t* scales = vnni4_group_scales(t, g);
  const float16x8_t h0 = vreinterpretq_f16_u16(vld1q_u16(scales));
  const float16x8_t h1 = vreinterpretq_f16_u16(vld1q_u16(scales + 8));
  const float32x4_t d[4] = {vcvt_f32_f16(vget_low_f16(h0)), vcvt_high_f32_f16(h0), vcvt_f32_f16(vget_low_f16(h1)),
                            vcvt_high_f32_f16(h1)};
  for (int m = 0; m < 4; ++m) acc[m] = vaddq_f32(acc[m], rounded_product(d[m], vcvtq_f32_s32(isum[m])));
}

// The loop every kernel shares: per group, `dots(codes, x, a)` adds the
// group's signed dots to a (x: the group's first activation), `finish(g, a,
// isum)` turns them into I_g; then acc + d_g * float(I_g), and y = acc * inv.
template <class Dots, class Finish>
void gemv_groups(const Vnni4Task& t, int64_t group_k, Dots dots, Finish finish) {
  float32x4_t acc[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  for (int64_t g = 0; g < t.groups; ++g) {
    int32x4_t a[4];
    for (auto& v : a) v = vdupq_n_s32(0);
    dots(vnni4_group_codes(t, g), t.x + g * group_k, a);
    int32x4_t isum[4];
    finish(g, a, isum);
    add_group(t, g, isum, acc);
  }
  for (int m = 0; m < 4; ++m) vst1q_f32(t.out + 4 * m, vmulq_n_f32(acc[m], t.inv));
}

// I_g = dots + factor * S_g, for weights biased by `factor` (q8_0, int2).
inline void biased_finish(const Vnni4Task& t, int64_t g, int32_t factor, const int32x4_t (&a)[4],
                          int32x4_t (&isum)[4]) {
  const int32x4_t xs = xsum_term(t, g, factor);
  for (int m = 0; m < 4; ++m) isum[m] = vaddq_s32(a[m], xs);
}

// The 4 vectors of one 64-byte line (signed weights already) times lane j of x.
template <int j>
inline void dot_line(const int8x16_t (&w)[4], int8x16_t x, int32x4_t (&a)[4]) {
  for (int m = 0; m < 4; ++m) a[m] = vdotq_laneq_s32(a[m], w[m], x, j);
}

// q8_0: u = w + 128, so u ^ 0x80 is w itself and the dot is D - 128 S. A
// 64-byte step is 4 k; four steps meet 16 activations, one lane each.
template <int j>
inline void q8_0_step(const uint8_t* c, int8x16_t x, int32x4_t (&a)[4]) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  int8x16_t w[4];
  for (int m = 0; m < 4; ++m) w[m] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(c + 64 * j + 16 * m), flip));
  dot_line<j>(w, x, a);
}

void q8_0_gemv(const Vnni4Task& t) {
  // A group is steps_per_group steps of 4 k, a multiple of 16 k.
  gemv_groups(
      t, 4 * t.steps_per_group,
      [&](const uint8_t* c, const int8_t* x, int32x4_t (&a)[4]) {
        for (int64_t s = 0; s < t.steps_per_group; s += 4, c += 256, x += 16) {
          for (int i = 0; i < 4; ++i) prefetch(c + 64 * i);
          const int8x16_t xv = vld1q_s8(x);
          q8_0_step<0>(c, xv, a);
          q8_0_step<1>(c, xv, a);
          q8_0_step<2>(c, xv, a);
          q8_0_step<3>(c, xv, a);
        }
      },
      [&](int64_t g, const int32x4_t (&a)[4], int32x4_t (&isum)[4]) {
        biased_finish(t, g, t.xsum_factor + 128, a, isum);  // w = u - 128
      });
}

// int2: a 64-byte step is 16 k; bits 2v..2v+1 of a byte are k0 + 4v + j, so
// plane v meets lane v of the step's 16 activations. tbl looks a nibble's
// low (lut01) or high (lut23) code pair up in t.lut, flipped by 0x80 once so
// the entries are u - 128 (levels may span 255: u needs all 8 bits).
void int2_gemv(const Vnni4Task& t) {
  const uint8x16_t flip = vdupq_n_u8(0x80), nibble = vdupq_n_u8(0x0f);
  const uint8x16_t lut01 = veorq_u8(vld1q_u8(t.lut), flip), lut23 = veorq_u8(vld1q_u8(t.lut + 16), flip);
  gemv_groups(
      t, 16 * t.steps_per_group,
      [&](const uint8_t* c, const int8_t* x, int32x4_t (&a)[4]) {
        for (int64_t s = 0; s < t.steps_per_group; ++s, c += 64, x += 16) {
          prefetch(c);
          const int8x16_t xv = vld1q_s8(x);
          uint8x16_t lo[4], hi[4];
          for (int m = 0; m < 4; ++m) {
            const uint8x16_t b = vld1q_u8(c + 16 * m);
            lo[m] = vandq_u8(b, nibble);
            hi[m] = vshrq_n_u8(b, 4);
          }
          int8x16_t w[4];
          for (int m = 0; m < 4; ++m) w[m] = vreinterpretq_s8_u8(vqtbl1q_u8(lut01, lo[m]));
          dot_line<0>(w, xv, a);
          for (int m = 0; m < 4; ++m) w[m] = vreinterpretq_s8_u8(vqtbl1q_u8(lut23, lo[m]));
          dot_line<1>(w, xv, a);
          for (int m = 0; m < 4; ++m) w[m] = vreinterpretq_s8_u8(vqtbl1q_u8(lut01, hi[m]));
          dot_line<2>(w, xv, a);
          for (int m = 0; m < 4; ++m) w[m] = vreinterpretq_s8_u8(vqtbl1q_u8(lut23, hi[m]));
          dot_line<3>(w, xv, a);
        }
      },
      [&](int64_t g, const int32x4_t (&a)[4], int32x4_t (&isum)[4]) {
        biased_finish(t, g, t.xsum_factor + 128, a, isum);  // weight = u - 128
      });
}

// int1: an 8-byte step is 4 k of 16 rows, bit 4r + j; a quarter's 16 bits
// are bytes 2m and 2m + 1. tbl spreads each of those bytes over 8 lanes and
// cmtst against the lanes' bit gives 0xff = -1 where the bit is set: the
// weight -bit, whose dot is -D, so I = 2 D + xsum_factor S = xsum_factor S - 2 dot.
template <int j>
inline void int1_step(uint8x16_t two_steps, int8x16_t x, uint8x16_t bit, int32x4_t (&a)[4]) {
  const uint8x16_t spread = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  int8x16_t w[4];
  for (int m = 0; m < 4; ++m) {
    const uint8x16_t bytes = vqtbl1q_u8(two_steps, vaddq_u8(spread, vdupq_n_u8(8 * (j % 2) + 2 * m)));
    w[m] = vreinterpretq_s8_u8(vtstq_u8(bytes, bit));
  }
  dot_line<j>(w, x, a);
}

void int1_gemv(const Vnni4Task& t) {
  const uint8x16_t bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  // A group is steps_per_group steps of 4 k, a multiple of 16 k.
  gemv_groups(
      t, 4 * t.steps_per_group,
      [&](const uint8_t* c, const int8_t* x, int32x4_t (&a)[4]) {
        for (int64_t s = 0; s < t.steps_per_group; s += 4, c += 32, x += 16) {
          prefetch(c);
          const int8x16_t xv = vld1q_s8(x);
          const uint8x16_t s01 = vld1q_u8(c), s23 = vld1q_u8(c + 16);
          int1_step<0>(s01, xv, bit, a);
          int1_step<1>(s01, xv, bit, a);
          int1_step<2>(s23, xv, bit, a);
          int1_step<3>(s23, xv, bit, a);
        }
      },
      [&](int64_t g, const int32x4_t (&a)[4], int32x4_t (&isum)[4]) {
        const int32x4_t xs = xsum_term(t, g, t.xsum_factor);
        for (int m = 0; m < 4; ++m) isum[m] = vsubq_s32(xs, vshlq_n_s32(a[m], 1));
      });
}

}  // namespace

void q8_0_gemv_neon(const Vnni4Task& t) { q8_0_gemv(t); }
void int2_gemv_neon(const Vnni4Task& t) { int2_gemv(t); }
void int1_gemv_neon(const Vnni4Task& t) { int1_gemv(t); }

}  // namespace lowbit
