// The Values policies of simd_signed_k_body.h on 64-bit Arm: Q6_K, Q3_K and
// IQ4_XS super-blocks unpacked into signed bytes with NEON, and their
// sub-block steps. Each writes exactly the bytes and floats of its AVX2
// namesake (the unpack is integer; a step is fp16 d times the scale code, one
// rounded float product), so the body above computes what it computes on x86
// up to its float summation order (the lane type's).
// Built with -march=armv8.2-a+dotprod (arm_neon/); included by
// simd_signed_k_body.h only where __ARM_NEON is defined.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/half.h"
#include "quant/iq4_nl.h"
#include "quant/iq4_xs.h"
#include "quant/q3_k.h"
#include "quant/q6_k.h"

namespace lowbit::simd {

// Q6_K: values minus 32 (-32..31) from 4 low bits in ql and 2 high bits in qh
// (quant/q6_k.h): for half h, a = ql[64h, +32), c = ql[64h + 32, +32),
// hb = qh[32h, +32), the four runs of 32 values are
//   a & 15 | (hb << 4) & 48,  c & 15 | (hb << 2) & 48,  a >> 4 | hb & 48,  c >> 4 | (hb >> 2) & 48.
struct Q6KValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ6_K);
  static constexpr int kRunValues = 16;  // values per sub-block (one step each)
  static void unpack(const uint8_t* block, int8_t* v /* [256] */) {
    const uint8x16_t low4 = vdupq_n_u8(0x0f), bits45 = vdupq_n_u8(0x30), k32 = vdupq_n_u8(32);
    const auto store = [&](int at, uint8x16_t low, uint8x16_t high) {
      const uint8x16_t value = vorrq_u8(low, vandq_u8(high, bits45));
      vst1q_s8(v + at, vreinterpretq_s8_u8(vsubq_u8(value, k32)));
    };
    const uint8_t* ql = block + offsetof(BlockQ6_K, ql);
    const uint8_t* qh = block + offsetof(BlockQ6_K, qh);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {  // 16-byte quarter i of the block's two halves
      const int h = i / 2, part = 16 * (i % 2);
      const uint8x16_t a = vld1q_u8(ql + 64 * h + part), c = vld1q_u8(ql + 64 * h + 32 + part);
      const uint8x16_t hb = vld1q_u8(qh + 32 * h + part);
      store(128 * h + part, vandq_u8(a, low4), vshlq_n_u8(hb, 4));
      store(128 * h + 32 + part, vandq_u8(c, low4), vshlq_n_u8(hb, 2));
      store(128 * h + 64 + part, vshrq_n_u8(a, 4), hb);
      store(128 * h + 96 + part, vshrq_n_u8(c, 4), vshrq_n_u8(hb, 2));
    }
  }
  static void steps(const uint8_t* block, float* step /* [16] */) {
    uint16_t d16;
    std::memcpy(&d16, block + offsetof(BlockQ6_K, d), 2);
    const float d = fp16_to_float(d16);
    const auto* scales = reinterpret_cast<const int8_t*>(block + offsetof(BlockQ6_K, scales));
    for (int s = 0; s < 16; ++s) step[s] = d * static_cast<float>(scales[s]);
  }
};

// Q3_K: values minus 4 (-4..3) from 2 low bits in qs and 1 high bit in hmask
// (quant/q3_k.h): run g (0..3) of half h is (qs[32h, +32) >> 2g) & 3 with bit
// 4h + g of hmask[0, 32) as bit 2.
struct Q3KValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ3_K);
  static constexpr int kRunValues = 16;
  template <int kHalf, int kGroup>
  static void unpack_group(uint8x16_t q, uint8x16_t hm, int8_t* v) {
    constexpr int kBit = 4 * kHalf + kGroup;
    const uint8x16_t low = vandq_u8(vshrq_n_u8(q, 2 * kGroup), vdupq_n_u8(3));
    uint8x16_t high;
    if constexpr (kBit >= 2)
      high = vshrq_n_u8(hm, kBit - 2);
    else
      high = vshlq_n_u8(hm, 2 - kBit);
    const uint8x16_t value = vorrq_u8(low, vandq_u8(high, vdupq_n_u8(4)));
    vst1q_s8(v, vreinterpretq_s8_u8(vsubq_u8(value, vdupq_n_u8(4))));
  }
  template <int kHalf>
  static void unpack_half(const uint8_t* block, int8_t* v) {
#pragma GCC unroll 2
    for (int part = 0; part < 32; part += 16) {
      const uint8x16_t q = vld1q_u8(block + offsetof(BlockQ3_K, qs) + 32 * kHalf + part);
      const uint8x16_t hm = vld1q_u8(block + offsetof(BlockQ3_K, hmask) + part);
      unpack_group<kHalf, 0>(q, hm, v + 128 * kHalf + part);
      unpack_group<kHalf, 1>(q, hm, v + 128 * kHalf + 32 + part);
      unpack_group<kHalf, 2>(q, hm, v + 128 * kHalf + 64 + part);
      unpack_group<kHalf, 3>(q, hm, v + 128 * kHalf + 96 + part);
    }
  }
  static void unpack(const uint8_t* block, int8_t* v /* [256] */) {
    unpack_half<0>(block, v);
    unpack_half<1>(block, v);
  }
  // The 16 6-bit scale codes (quant/q3_k.h's packing) less 32, times d.
  static void steps(const uint8_t* block, float* step /* [16] */) {
    uint32_t w[3];
    std::memcpy(w, block + offsetof(BlockQ3_K, scales), 12);
    constexpr uint32_t kLow4 = 0x0f0f0f0fu, kLow2 = 0x03030303u;
    const uint32_t codes[4] = {(w[0] & kLow4) | (w[2] & kLow2) << 4, (w[1] & kLow4) | (w[2] >> 2 & kLow2) << 4,
                               (w[0] >> 4 & kLow4) | (w[2] >> 4 & kLow2) << 4,
                               (w[1] >> 4 & kLow4) | (w[2] >> 6 & kLow2) << 4};
    uint8_t bytes[16];
    std::memcpy(bytes, codes, 16);
    uint16_t d16;
    std::memcpy(&d16, block + offsetof(BlockQ3_K, d), 2);
    const float d = fp16_to_float(d16);
    for (int s = 0; s < 16; ++s) step[s] = d * static_cast<float>(static_cast<int>(bytes[s]) - 32);
  }
};

// IQ4_XS: the codebook values (kIq4NlValues) of the 4-bit indices by `tbl`.
// 32 bytes of qs are two sub-blocks of 32, 16 bytes each: low nibbles are a
// sub-block's elements 0..15, high nibbles 16..31. Steps d * (code - 32).
struct Iq4XsValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockIq4Xs);
  static constexpr int kRunValues = 32;
  static void unpack(const uint8_t* block, int8_t* v /* [256] */) {
    const uint8x16_t low4 = vdupq_n_u8(0x0f);
    const int8x16_t book = vld1q_s8(kIq4NlValues.data());
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
      const uint8x16_t q = vld1q_u8(block + offsetof(BlockIq4Xs, qs) + 16 * s);
      vst1q_s8(v + 32 * s, vqtbl1q_s8(book, vandq_u8(q, low4)));
      vst1q_s8(v + 32 * s + 16, vqtbl1q_s8(book, vshrq_n_u8(q, 4)));
    }
  }
  static void steps(const uint8_t* block, float* step /* [8] */) {
    BlockIq4Xs b;
    std::memcpy(&b, block, offsetof(BlockIq4Xs, qs));  // d and the scale codes
    const float d = fp16_to_float(b.d);
    for (int j = 0; j < 8; ++j) step[j] = d * static_cast<float>(iq4_xs_scale_code(b, j) - 32);
  }
};

}  // namespace lowbit::simd
