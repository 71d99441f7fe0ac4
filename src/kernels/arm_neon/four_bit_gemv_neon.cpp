// The 4-bit GEMV kernels on 64-bit Arm (q4_0, iq4_nl; vnni4_layout.h, 4-bit
// step): the Arm paper's interleaved groups as sdot sees them. A quarter of a
// 64-byte step is 4 rows x 4 k, one 32-bit lane per row, like the rows of
// its Q4_0 x4 blocks; `and` and `ushr` split a quarter's nibbles into k0..k0+3
// (low) and k0+4..k0+7 (high), and `sdot` with a lane operand multiplies
// each by its 4 activations. Two steps meet one vector of 16 activations.
//  * int4 linear (q4_0): the nibble 0..15 is a non-negative int8 as it
//    stands, so sdot takes it unchanged and I = D + xsum_factor * S (-8 S)
//    restores nibble - 8.
//  * int4 lookup (iq4_nl): `tbl` maps the nibble to the codebook's signed
//    int8 value (Vnni4Task::lut, 16 entries) and sdot multiplies it as
//    signed: I = D, no bias (xsum_factor 0).
// Integer sums are exact (|I| <= 32 x 128 x 127 per group), so y is the
// reference's bits.
#include "kernels/arm_neon/vnni4_neon.h"

namespace lowbit {

namespace {

using namespace neon_vnni4;

// One 64-byte step's quarters split into the signed weights of its low
// (k0..k0+3) and high (k0+4..k0+7) nibbles, then dotted with lanes lo_lane
// and lo_lane + 1 of the activations.
template <int lo_lane, int kTokens, class Weights>
inline void four_bit_step(const uint8_t* c, const int8x16_t (&x)[kTokens], Weights weights,
                          int32x4_t (&a)[kTokens][4]) {
  const uint8x16_t nibble = vdupq_n_u8(0x0f);
  uint8x16_t b[4];
  for (int m = 0; m < 4; ++m) b[m] = vld1q_u8(c + 16 * m);
  int8x16_t w[4];
  for (int m = 0; m < 4; ++m) w[m] = weights(vandq_u8(b[m], nibble));
  dot_line<lo_lane>(w, x, a);
  for (int m = 0; m < 4; ++m) w[m] = weights(vshrq_n_u8(b[m], 4));
  dot_line<lo_lane + 1>(w, x, a);
}

// weights(nibbles) -> the signed int8 weights the nibbles stand for (before
// the xsum correction).
template <int kTokens, class Weights>
void four_bit_pass(const Vnni4Task* t, Weights weights) {
  // A group is steps_per_group steps of 8 k, a multiple of 16 k: an even count.
  const int64_t steps = t[0].steps_per_group;
  gemv_groups<kTokens>(
      t, 8 * steps,
      [&](const uint8_t* c, const int8_t* const (&x)[kTokens], int32x4_t (&a)[kTokens][4]) {
        for (int64_t s = 0; s < steps; s += 2, c += 128) {
          prefetch(c);
          prefetch(c + 64);
          int8x16_t xv[kTokens];
          load_activations(x, 8 * s, xv);
          four_bit_step<0>(c, xv, weights, a);
          four_bit_step<2>(c + 64, xv, weights, a);
        }
      },
      [](const Vnni4Task& task, int64_t g, const int32x4_t (&a)[4], int32x4_t (&isum)[4]) {
        biased_finish(task, g, task.xsum_factor, a, isum);
      });
}

template <int kTokens>
void int4_linear_pass(const Vnni4Task* t) {
  four_bit_pass<kTokens>(t, [](uint8x16_t u) { return vreinterpretq_s8_u8(u); });
}

template <int kTokens>
void int4_lut_pass(const Vnni4Task* t) {
  const int8x16_t codebook = vld1q_s8(reinterpret_cast<const int8_t*>(t[0].lut));
  four_bit_pass<kTokens>(t, [codebook](uint8x16_t u) { return vqtbl1q_s8(codebook, u); });
}

}  // namespace

void int4_linear_gemv_neon(const Vnni4Task& t) { int4_linear_pass<1>(&t); }
void int4_linear_tokens_neon(const Vnni4Task* t, int count) {
  run_tokens(t, count, int4_linear_pass<2>, int4_linear_pass<3>, int4_linear_pass<4>);
}
void int4_lut_gemv_neon(const Vnni4Task& t) { int4_lut_pass<1>(&t); }
void int4_lut_tokens_neon(const Vnni4Task* t, int count) {
  run_tokens(t, count, int4_lut_pass<2>, int4_lut_pass<3>, int4_lut_pass<4>);
}

}  // namespace lowbit
