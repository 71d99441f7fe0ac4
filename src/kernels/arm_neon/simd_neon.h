// 8 float lanes as a pair of 128-bit NEON registers (AArch64 Advanced SIMD),
// as the ISA-neutral op bodies (kernels/simd_*_body.h) expect them: the same
// lane count as x86_avx2/simd_avx2.h, so the bodies' block sizes (multiples of
// kLanes) and register budgets hold as for AVX2. Included only by files built
// for AArch64; it uses ARMv8.0-A Advanced SIMD alone (f16 <-> f32 conversion
// included), nothing of ARMv8.2-A.
//
// Each op gives the bits Avx2's does where that one is exact (integer ops,
// conversions, rounding, max / min, selects), and the reductions add in
// Avx2's order, so a float kernel sums exactly as on AVX2. The exception:
// out-of-range float -> int32 (to_i32, pow2) saturates here, where x86 gives
// INT32_MIN; the bodies only convert values in range.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

namespace lowbit::simd {

struct Neon {
  struct V {
    float32x4_t lo, hi;  // lanes 0-3, 4-7
  };
  static constexpr int kLanes = 8;
  static constexpr const char* kName = "neon";

  static V zero() { return {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}; }
  static V set1(float v) { return {vdupq_n_f32(v), vdupq_n_f32(v)}; }
  static V load(const float* p) { return {vld1q_f32(p), vld1q_f32(p + 4)}; }
  static void store(float* p, V v) {
    vst1q_f32(p, v.lo);
    vst1q_f32(p + 4, v.hi);
  }
  // The first n (< kLanes) lanes; the rest read as 0 / are left alone. NEON has
  // no masked load or store, and the lanes past n may be past the buffer.
  static V load_partial(const float* p, int64_t n) {
    float tmp[kLanes] = {};
    std::memcpy(tmp, p, static_cast<size_t>(n) * 4);
    return load(tmp);
  }
  static void store_partial(float* p, V v, int64_t n) {
    float tmp[kLanes];
    store(tmp, v);
    std::memcpy(p, tmp, static_cast<size_t>(n) * 4);
  }
  // fcvtl: exact, as F16C's vcvtph2ps.
  static V load_f16(const uint16_t* p) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
    return {vcvt_f32_f16(vget_low_f16(h)), vcvt_high_f32_f16(h)};
  }
  static V load_f16_partial(const uint16_t* p, int64_t n) {
    uint16_t tmp[kLanes] = {};
    std::memcpy(tmp, p, static_cast<size_t>(n) * 2);
    return load_f16(tmp);
  }
  // bf16 is the top half of a float.
  static V load_bf16(const uint16_t* p) {
    const uint16x8_t w = vld1q_u16(p);
    return {vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(w), 16)), vreinterpretq_f32_u32(vshll_high_n_u16(w, 16))};
  }
  static V load_bf16_partial(const uint16_t* p, int64_t n) {
    uint16_t tmp[kLanes] = {};
    std::memcpy(tmp, p, static_cast<size_t>(n) * 2);
    return load_bf16(tmp);
  }
  // Round to nearest even, as float_to_fp16 does: fcvtn rounds by FPCR's
  // mode, round to nearest even unless a program changes it.
  static void store_f16(uint16_t* p, V v) {
    vst1q_u16(p, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(v.lo), v.hi)));
  }
  static void store_f16_partial(uint16_t* p, V v, int64_t n) {
    uint16_t tmp[kLanes];
    store_f16(tmp, v);
    std::memcpy(p, tmp, static_cast<size_t>(n) * 2);
  }
  // kLanes bytes (0..255) as floats.
  static V load_u8(const uint8_t* p) {
    const uint16x8_t w = vmovl_u8(vld1_u8(p));
    return {vcvtq_f32_u32(vmovl_u16(vget_low_u16(w))), vcvtq_f32_u32(vmovl_high_u16(w))};
  }
  // kLanes signed bytes as floats.
  static V load_i8(const int8_t* p) {
    const int16x8_t w = vmovl_s8(vld1_s8(p));
    return {vcvtq_f32_s32(vmovl_s16(vget_low_s16(w))), vcvtq_f32_s32(vmovl_high_s16(w))};
  }
  static void prefetch(const void* p) { __builtin_prefetch(p, 0, 3); }

  static V add(V a, V b) { return {vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
  static V sub(V a, V b) { return {vsubq_f32(a.lo, b.lo), vsubq_f32(a.hi, b.hi)}; }
  static V mul(V a, V b) { return {vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)}; }
  static V div(V a, V b) { return {vdivq_f32(a.lo, b.lo), vdivq_f32(a.hi, b.hi)}; }
  static V fmadd(V a, V b, V c) { return {vfmaq_f32(c.lo, a.lo, b.lo), vfmaq_f32(c.hi, a.hi, b.hi)}; }  // a * b + c
  static V fnmadd(V a, V b, V c) { return {vfmsq_f32(c.lo, a.lo, b.lo), vfmsq_f32(c.hi, a.hi, b.hi)}; }  // c - a * b
  // a > b ? a : b, as maxps (b where either is NaN, or both are zeros): fmax
  // would give NaN, so exp's clamp and relu2's max(g, 0) would differ from AVX2.
  static float32x4_t max4(float32x4_t a, float32x4_t b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  static float32x4_t min4(float32x4_t a, float32x4_t b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  static V max(V a, V b) { return {max4(a.lo, b.lo), max4(a.hi, b.hi)}; }
  static V min(V a, V b) { return {min4(a.lo, b.lo), min4(a.hi, b.hi)}; }
  static V abs(V a) { return {vabsq_f32(a.lo), vabsq_f32(a.hi)}; }
  static V floor(V a) { return {vrndmq_f32(a.lo), vrndmq_f32(a.hi)}; }
  // x where the mask's lanes are set, else 0.
  static float32x4_t keep4(uint32x4_t m, float32x4_t x) { return vreinterpretq_f32_u32(vandq_u32(m, vreinterpretq_u32_f32(x))); }
  // x with a's lanes where a > b, else 0 (ordered: NaN lanes 0).
  static V select_gt(V a, V b, V x) { return {keep4(vcgtq_f32(a.lo, b.lo), x.lo), keep4(vcgtq_f32(a.hi, b.hi), x.hi)}; }
  // 2^n for integer-valued n in [-126, 127].
  static float32x4_t pow2_4(float32x4_t n) {
    const int32x4_t e = vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127));
    return vreinterpretq_f32_s32(vshlq_n_s32(e, 23));
  }
  static V pow2(V n) { return {pow2_4(n.lo), pow2_4(n.hi)}; }
  // Integer lanes (int32), for int8 quantization.
  struct I {
    int32x4_t lo, hi;
  };
  // Round to nearest even, as cvtps2dq under the default MXCSR (a integer-valued: exact).
  static I to_i32(V a) { return {vcvtnq_s32_f32(a.lo), vcvtnq_s32_f32(a.hi)}; }
  // a to the nearest integer, halves away from zero (std::round): one fcvtas.
  static I round_half_away(V a) { return {vcvtaq_s32_f32(a.lo), vcvtaq_s32_f32(a.hi)}; }
  static I add_i32(I a, I b) { return {vaddq_s32(a.lo, b.lo), vaddq_s32(a.hi, b.hi)}; }
  static I zero_i32() { return {vdupq_n_s32(0), vdupq_n_s32(0)}; }
  // Sum of n int8 (n a multiple of 16): pairwise widening adds, 32 bytes into
  // int16 lanes (each at most 4 x 128), those into int32 lanes.
  static int32_t sum_i8(const int8_t* p, int64_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
      acc = vpadalq_s16(acc, vpadalq_s8(vpaddlq_s8(vld1q_s8(p + i)), vld1q_s8(p + i + 16)));
    if (i < n) acc = vpadalq_s16(acc, vpaddlq_s8(vld1q_s8(p + i)));
    return vaddvq_s32(acc);
  }
  static int32_t reduce_add_i32(I a) { return vaddvq_s32(vaddq_s32(a.lo, a.hi)); }
  // Lanes to bytes, saturating as packssdw / packsswb do (lanes in [-128, 127]
  // are never saturated).
  static int8x8_t pack_i8(I a) { return vqmovn_s16(vcombine_s16(vqmovn_s32(a.lo), vqmovn_s32(a.hi))); }
  static void store_i8(int8_t* p, I a) { vst1_s8(p, pack_i8(a)); }
  static void store_i8_partial(int8_t* p, I a, int64_t n) {
    int8_t tmp[kLanes];
    vst1_s8(tmp, pack_i8(a));
    std::memcpy(p, tmp, static_cast<size_t>(n));
  }

  // Avx2's order: s[i] = a[i] + a[i + 4], then (s0 + s2) + (s1 + s3).
  static float reduce_add(V a) {
    const float32x4_t s = vaddq_f32(a.lo, a.hi);
    const float32x2_t t = vadd_f32(vget_low_f32(s), vget_high_f32(s));
    return vget_lane_f32(t, 0) + vget_lane_f32(t, 1);
  }
  // out[i] = the sum of the lanes of the i-th vector, in hadd's order: per
  // half ((x0 + x1) + (x2 + x3)), then low half + high half.
  static void reduce_add4(V a, V b, V c, V d, float* out) {
    const float32x4_t lo = vpaddq_f32(vpaddq_f32(a.lo, b.lo), vpaddq_f32(c.lo, d.lo));
    const float32x4_t hi = vpaddq_f32(vpaddq_f32(a.hi, b.hi), vpaddq_f32(c.hi, d.hi));
    vst1q_f32(out, vaddq_f32(lo, hi));
  }
  // The lanes widened to double, then summed.
  static double reduce_add_f64(V a) {
    const float64x2_t lo = vaddq_f64(vcvt_f64_f32(vget_low_f32(a.lo)), vcvt_high_f64_f32(a.lo));
    const float64x2_t hi = vaddq_f64(vcvt_f64_f32(vget_low_f32(a.hi)), vcvt_high_f64_f32(a.hi));
    return vaddvq_f64(vaddq_f64(lo, hi));
  }
  // Avx2's order and maxps's rule (max4).
  static float reduce_max(V a) {
    const float32x4_t s = max4(a.lo, a.hi);
    const float32x2_t t = vbsl_f32(vcgt_f32(vget_low_f32(s), vget_high_f32(s)), vget_low_f32(s), vget_high_f32(s));
    const float t0 = vget_lane_f32(t, 0), t1 = vget_lane_f32(t, 1);
    return t0 > t1 ? t0 : t1;
  }
  // The 8 x 8 tile r[row] lane col becomes r[col] lane row, as four 4 x 4
  // tiles: (rows 0-3, cols 0-3) stays, (rows 0-3, cols 4-7) and (rows 4-7,
  // cols 0-3) swap.
  static void transpose(V (&r)[8]) {
    const auto t4 = [](float32x4_t a, float32x4_t b, float32x4_t c, float32x4_t d, float32x4_t (&o)[4]) {
      const float64x2_t ab0 = vreinterpretq_f64_f32(vtrn1q_f32(a, b)), ab1 = vreinterpretq_f64_f32(vtrn2q_f32(a, b));
      const float64x2_t cd0 = vreinterpretq_f64_f32(vtrn1q_f32(c, d)), cd1 = vreinterpretq_f64_f32(vtrn2q_f32(c, d));
      o[0] = vreinterpretq_f32_f64(vtrn1q_f64(ab0, cd0));
      o[1] = vreinterpretq_f32_f64(vtrn1q_f64(ab1, cd1));
      o[2] = vreinterpretq_f32_f64(vtrn2q_f64(ab0, cd0));
      o[3] = vreinterpretq_f32_f64(vtrn2q_f64(ab1, cd1));
    };
    float32x4_t a[4], b[4], c[4], d[4];  // tiles (rows, cols): a (0-3, 0-3), b (0-3, 4-7), c (4-7, 0-3), d (4-7, 4-7)
    t4(r[0].lo, r[1].lo, r[2].lo, r[3].lo, a);
    t4(r[0].hi, r[1].hi, r[2].hi, r[3].hi, b);
    t4(r[4].lo, r[5].lo, r[6].lo, r[7].lo, c);
    t4(r[4].hi, r[5].hi, r[6].hi, r[7].hi, d);
    for (int i = 0; i < 4; ++i) {
      r[i] = {a[i], c[i]};
      r[4 + i] = {b[i], d[i]};
    }
  }
};

}  // namespace lowbit::simd
