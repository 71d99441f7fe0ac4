// The up-convert-and-compute GEMV kernels of 8, 2 and 1 bits on 64-bit Arm
// (vnni4_layout.h; the helpers they share and the register picture are in
// vnni4_neon.h; the 4-bit ones are four_bit_gemv_neon.cpp).
// sdot is signed x signed: the kernels multiply signed weights of the form
// dot_factor * u + bias (q8_0, int2: u - 128; int1: -bit) and correct the
// bias with S_g, so I_g is the format's, exactly (integer sums wrap mod 2^32
// like the reference's int32, and I_g itself fits).
#include "kernels/arm_neon/vnni4_neon.h"

namespace lowbit {

namespace {

using namespace neon_vnni4;

// q8_0: u = w + 128, so u ^ 0x80 is w itself and the dot is D - 128 S. A
// 64-byte step is 4 k; four steps meet 16 activations, one lane each.
template <int j, int kTokens>
inline void q8_0_step(const uint8_t* c, const int8x16_t (&x)[kTokens], int32x4_t (&a)[kTokens][4]) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  int8x16_t w[4];
  for (int m = 0; m < 4; ++m) w[m] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(c + 64 * j + 16 * m), flip));
  dot_line<j>(w, x, a);
}

template <int kTokens>
void q8_0_pass(const Vnni4Task* t) {
  // A group is steps_per_group steps of 4 k, a multiple of 16 k.
  const int64_t steps = t[0].steps_per_group;
  gemv_groups<kTokens>(
      t, 4 * steps,
      [&](const uint8_t* c, const int8_t* const (&x)[kTokens], int32x4_t (&a)[kTokens][4]) {
        for (int64_t s = 0; s < steps; s += 4, c += 256) {
          for (int i = 0; i < 4; ++i) prefetch(c + 64 * i);
          int8x16_t xv[kTokens];
          load_activations(x, 4 * s, xv);
          q8_0_step<0>(c, xv, a);
          q8_0_step<1>(c, xv, a);
          q8_0_step<2>(c, xv, a);
          q8_0_step<3>(c, xv, a);
        }
      },
      [](const Vnni4Task& task, int64_t g, const int32x4_t (&a)[4], int32x4_t (&isum)[4]) {
        biased_finish(task, g, task.xsum_factor + 128, a, isum);  // w = u - 128
      });
}

// int2: a 64-byte step is 16 k; bits 2v..2v+1 of a byte are k0 + 4v + j, so
// plane v meets lane v of the step's 16 activations. tbl looks a nibble's
// low (lut01) or high (lut23) code pair up in t.lut, flipped by 0x80 once so
// the entries are u - 128 (levels may span 255: u needs all 8 bits).
template <int kTokens>
void int2_pass(const Vnni4Task* t) {
  const uint8x16_t flip = vdupq_n_u8(0x80), nibble = vdupq_n_u8(0x0f);
  const uint8x16_t lut01 = veorq_u8(vld1q_u8(t[0].lut), flip), lut23 = veorq_u8(vld1q_u8(t[0].lut + 16), flip);
  const int64_t steps = t[0].steps_per_group;
  gemv_groups<kTokens>(
      t, 16 * steps,
      [&](const uint8_t* c, const int8_t* const (&x)[kTokens], int32x4_t (&a)[kTokens][4]) {
        for (int64_t s = 0; s < steps; ++s, c += 64) {
          prefetch(c);
          int8x16_t xv[kTokens];
          load_activations(x, 16 * s, xv);
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
      [](const Vnni4Task& task, int64_t g, const int32x4_t (&a)[4], int32x4_t (&isum)[4]) {
        biased_finish(task, g, task.xsum_factor + 128, a, isum);  // weight = u - 128
      });
}

// int1: a 64-byte line is 32 k of 16 rows as 8 bit planes (byte 4r + j bit
// p: k0 + 4p + j). cmtst of a quarter against plane p's bit gives 0xff = -1
// where the bit is set: the weight -bit, whose dot is -D, so
// I = 2 D + xsum_factor S = xsum_factor S - 2 dot. Planes 0-3 meet lanes 0-3
// of the line's first 16 activations, planes 4-7 those of the next 16.
template <int p, int kTokens>
inline void int1_plane(const uint8x16_t (&q)[4], const int8x16_t (&x)[kTokens], int32x4_t (&a)[kTokens][4]) {
  int8x16_t w[4];
  for (int m = 0; m < 4; ++m) w[m] = vreinterpretq_s8_u8(vtstq_u8(q[m], vdupq_n_u8(1 << p)));
  dot_line<p % 4>(w, x, a);
}

template <int kTokens>
void int1_pass(const Vnni4Task* t) {
  // A group is steps_per_group lines of 32 k.
  const int64_t lines = t[0].steps_per_group;
  gemv_groups<kTokens>(
      t, 32 * lines,
      [&](const uint8_t* c, const int8_t* const (&x)[kTokens], int32x4_t (&a)[kTokens][4]) {
        for (int64_t s = 0; s < lines; ++s, c += 64) {
          prefetch(c);
          int8x16_t lo[kTokens], hi[kTokens];
          load_activations(x, 32 * s, lo);
          load_activations(x, 32 * s + 16, hi);
          uint8x16_t q[4];
          for (int m = 0; m < 4; ++m) q[m] = vld1q_u8(c + 16 * m);
          int1_plane<0>(q, lo, a);
          int1_plane<1>(q, lo, a);
          int1_plane<2>(q, lo, a);
          int1_plane<3>(q, lo, a);
          int1_plane<4>(q, hi, a);
          int1_plane<5>(q, hi, a);
          int1_plane<6>(q, hi, a);
          int1_plane<7>(q, hi, a);
        }
      },
      [](const Vnni4Task& task, int64_t g, const int32x4_t (&a)[4], int32x4_t (&isum)[4]) {
        const int32x4_t xs = xsum_term(task, g, task.xsum_factor);
        for (int m = 0; m < 4; ++m) isum[m] = vsubq_s32(xs, vshlq_n_s32(a[m], 1));
      });
}

}  // namespace

void q8_0_gemv_neon(const Vnni4Task& t) { q8_0_pass<1>(&t); }
void q8_0_tokens_neon(const Vnni4Task* t, int count) {
  run_tokens(t, count, q8_0_pass<2>, q8_0_pass<3>, q8_0_pass<4>);
}
void int2_gemv_neon(const Vnni4Task& t) { int2_pass<1>(&t); }
void int2_tokens_neon(const Vnni4Task* t, int count) {
  run_tokens(t, count, int2_pass<2>, int2_pass<3>, int2_pass<4>);
}
void int1_gemv_neon(const Vnni4Task& t) { int1_pass<1>(&t); }
void int1_tokens_neon(const Vnni4Task* t, int count) {
  run_tokens(t, count, int1_pass<2>, int1_pass<3>, int1_pass<4>);
}

}  // namespace lowbit
