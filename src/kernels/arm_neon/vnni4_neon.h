// What the NEON up-convert-and-compute kernels share (vnni4_gemv_neon.cpp,
// four_bit_gemv_neon.cpp): a row block of 16 rows as four int32x4 quarters
// (rows 0-3, 4-7, 8-11, 12-15). A 64-byte line of the layout is 4 vectors of
// 4 rows, each 32-bit lane one row's 4 consecutive k, so `sdot` with a lane
// operand multiplies a vector by the 4 activations of those k, as vpdpbusd
// does with a broadcast.
// Every kernel runs 1..kVnni4MaxTokens tokens of one row block per pass
// (kTokens, a template argument: the accumulators stay in registers). Each
// token's integer sums are exact and its float operations are the one-token
// kernel's, in the same order, so a token's y is the same bits however many
// tokens share its pass.
// Built with -march=armv8.2-a+dotprod (CMakeLists.txt); include it only there.
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "kernels/vnni4_layout.h"
#include "kernels/vnni4_matmul.h"

namespace lowbit::neon_vnni4 {

inline void prefetch(const uint8_t* p) { __builtin_prefetch(p + kVnni4PrefetchBytes, 0, 3); }

// factor * S_g broadcast, wrapping like the dots (the terms of I_g are
// exact modulo 2^32 and I_g fits int32).
inline int32x4_t xsum_term(const Vnni4Task& t, int64_t g, int32_t factor) {
  return vdupq_n_s32(static_cast<int32_t>(static_cast<uint32_t>(factor) * static_cast<uint32_t>(t.xsum[g])));
}

// I_g = dots + factor * S_g, for weights biased by `factor`.
inline void biased_finish(const Vnni4Task& t, int64_t g, int32_t factor, const int32x4_t (&a)[4],
                          int32x4_t (&isum)[4]) {
  const int32x4_t xs = xsum_term(t, g, factor);
  for (int m = 0; m < 4; ++m) isum[m] = vaddq_s32(a[m], xs);
}

// d * I rounded to float on its own, as the reference does: kept out of an
// fmla even where a build lets the compiler contract a multiply and an add.
inline float32x4_t rounded_product(float32x4_t a, float32x4_t b) {
  float32x4_t p = vmulq_f32(a, b);
  __asm__("" : "+w"(p));
  return p;
}

// The 16 rows' fp16 d_g of group g as four float quarters.
inline void group_scales(const Vnni4Task& t, int64_t g, float32x4_t (&d)[4]) {
  const uint16_t* scales = vnni4_group_scales(t, g);
  const float16x8_t h0 = vreinterpretq_f16_u16(vld1q_u16(scales));
  const float16x8_t h1 = vreinterpretq_f16_u16(vld1q_u16(scales + 8));
  d[0] = vcvt_f32_f16(vget_low_f16(h0));
  d[1] = vcvt_high_f32_f16(h0);
  d[2] = vcvt_f32_f16(vget_low_f16(h1));
  d[3] = vcvt_high_f32_f16(h1);
}

// The loop every kernel shares, for tokens t[0..kTokens) of one row block:
// per group, `dots(codes, x, a)` adds every token's signed dots to a[token]
// (x[token]: the group's first activation), `finish(task, g, a[token], isum)`
// turns them into I_g; then acc + d_g * float(I_g) in group order, and
// y = acc * inv.
template <int kTokens, class Dots, class Finish>
void gemv_groups(const Vnni4Task* t, int64_t group_k, Dots dots, Finish finish) {
  float32x4_t acc[kTokens][4];
  for (auto& token : acc)
    for (auto& v : token) v = vdupq_n_f32(0.0f);
  for (int64_t g = 0; g < t[0].groups; ++g) {
    int32x4_t a[kTokens][4];
    for (auto& token : a)
      for (auto& v : token) v = vdupq_n_s32(0);
    const int8_t* x[kTokens];
    for (int k = 0; k < kTokens; ++k) x[k] = t[k].x + g * group_k;
    dots(vnni4_group_codes(t[0], g), x, a);
    float32x4_t d[4];
    group_scales(t[0], g, d);
    for (int k = 0; k < kTokens; ++k) {
      int32x4_t isum[4];
      finish(t[k], g, a[k], isum);
      for (int m = 0; m < 4; ++m) acc[k][m] = vaddq_f32(acc[k][m], rounded_product(d[m], vcvtq_f32_s32(isum[m])));
    }
  }
  for (int k = 0; k < kTokens; ++k)
    for (int m = 0; m < 4; ++m) vst1q_f32(t[k].out + 4 * m, vmulq_n_f32(acc[k][m], t[k].inv));
}

// Every token's 16 activations starting at x[token] + offset.
template <int kTokens>
inline void load_activations(const int8_t* const (&x)[kTokens], int64_t offset, int8x16_t (&xv)[kTokens]) {
  for (int k = 0; k < kTokens; ++k) xv[k] = vld1q_s8(x[k] + offset);
}

// The 4 vectors of one 64-byte line (signed weights already) times lane j of
// every token's activations.
template <int j, int kTokens>
inline void dot_line(const int8x16_t (&w)[4], const int8x16_t (&x)[kTokens], int32x4_t (&a)[kTokens][4]) {
  for (int k = 0; k < kTokens; ++k)
    for (int m = 0; m < 4; ++m) a[k][m] = vdotq_laneq_s32(a[k][m], w[m], x[k], j);
}

// A several-token entry point (Vnni4Spec::tokens) from a kernel's passes of
// 2, 3 and 4 tokens.
using Vnni4Pass = void (*)(const Vnni4Task*);
inline void run_tokens(const Vnni4Task* tasks, int count, Vnni4Pass two, Vnni4Pass three, Vnni4Pass four) {
  static_assert(kVnni4MaxTokens == 4);
  (count == 2 ? two : count == 3 ? three : four)(tasks);
}

}  // namespace lowbit::neon_vnni4
