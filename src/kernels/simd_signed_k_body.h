// FloatTileDots (float_tile_dots.h) for the super-blocks of 256 whose values
// are signed and whose sub-blocks have a scale and no min: Q6_K (quant/q6_k.h)
// and Q3_K (quant/q3_k.h), sub-blocks of 16, and IQ4_XS (quant/iq4_xs.h), of
// 32. Written once over a lane type S
// (x86_avx2/simd_avx2.h, x86_avx512/simd_avx512.h, arm_neon/simd_neon.h) and
// a Values policy that unpacks a block into signed bytes and gives its 16
// steps: with AVX2 below, with NEON in arm_neon/signed_k_values_neon.h (the
// same bytes and steps).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/float_tile_dots.h"
#include "kernels/simd_block_sums.h"

#if defined(__AVX2__)
#include <immintrin.h>

#include "quant/iq4_nl.h"
#include "quant/iq4_xs.h"
#include "quant/q3_k.h"
#include "quant/q6_k.h"
#elif defined(__ARM_NEON)
#include "kernels/arm_neon/signed_k_values_neon.h"
#else
#error "simd_signed_k_body.h needs AVX2 or NEON"
#endif

namespace lowbit::simd {

#if defined(__AVX2__)

// Q6_K: values minus 32 (-32..31), 64 per step (the bit layout of
// quant/q6_k.h). The two high bits of element l + 32q sit at bits 2q, 2q + 1
// of qh[l]; a 16-bit shift by at most 4 places and a mask move them to bits
// 4-5 of the same byte. Steps d * scales[s], rounded as the reference.
struct Q6KValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ6_K);
  static constexpr int kRunValues = 16;  // values per sub-block (one step each)
  static void unpack(const uint8_t* block, int8_t* v /* [256] */) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30), k32 = _mm256_set1_epi8(32);
    const auto store = [&](int at, __m256i low, __m256i high) {
      const __m256i value = _mm256_or_si256(low, _mm256_and_si256(high, bits45));
      _mm256_store_si256(reinterpret_cast<__m256i*>(v + at), _mm256_sub_epi8(value, k32));
    };
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ6_K, ql) + 64 * h));
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ6_K, ql) + 64 * h + 32));
      const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ6_K, qh) + 32 * h));
      store(128 * h, _mm256_and_si256(a, low4), _mm256_slli_epi16(hb, 4));
      store(128 * h + 32, _mm256_and_si256(c, low4), _mm256_slli_epi16(hb, 2));
      store(128 * h + 64, _mm256_and_si256(_mm256_srli_epi16(a, 4), low4), hb);
      store(128 * h + 96, _mm256_and_si256(_mm256_srli_epi16(c, 4), low4), _mm256_srli_epi16(hb, 2));
    }
  }
  static void steps(const uint8_t* block, float* step /* [16] */) {
    uint16_t d16;
    std::memcpy(&d16, block + offsetof(BlockQ6_K, d), 2);
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(d16));
    const uint8_t* scales = block + offsetof(BlockQ6_K, scales);
    #pragma GCC unroll 2
    for (int c = 0; c < 16; c += 8)
      _mm256_storeu_ps(step + c, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                                     _mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + c))))));
  }
};

// Q3_K: values (qs bits) + 4 * (hmask bit) - 4 in -4..3 (quant/q3_k.h). The
// hmask bit of group (h, j) is bit 4h + j of each hmask byte, moved to bit 2
// (move_bit). Steps
// d * (code - 32), rounded as the reference, the codes unpacked with word
// operations: bytes 0-3 of the result are scales[0..3] & 15 with bits 0-1 of
// scales[8..11] on top, 4-7 scales[4..7] & 15 with bits 2-3, 8-11 scales[0..3]
// >> 4 with bits 4-5, 12-15 scales[4..7] >> 4 with bits 6-7.
struct Q3KValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ3_K);
  static constexpr int kRunValues = 16;
  template <int kHalf, int kGroup>
  static void unpack_group(__m256i q, __m256i hm, int8_t* v) {
    const __m256i low = _mm256_and_si256(_mm256_srli_epi16(q, 2 * kGroup), _mm256_set1_epi8(3));
    const __m256i value = _mm256_or_si256(low, move_bit<4 * kHalf + kGroup, 2>(hm));
    _mm256_store_si256(reinterpret_cast<__m256i*>(v + 128 * kHalf + 32 * kGroup), _mm256_sub_epi8(value, _mm256_set1_epi8(4)));
  }
  template <int kHalf>
  static void unpack_half(const uint8_t* block, __m256i hm, int8_t* v) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ3_K, qs) + 32 * kHalf));
    unpack_group<kHalf, 0>(q, hm, v);
    unpack_group<kHalf, 1>(q, hm, v);
    unpack_group<kHalf, 2>(q, hm, v);
    unpack_group<kHalf, 3>(q, hm, v);
  }
  static void unpack(const uint8_t* block, int8_t* v /* [256] */) {
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ3_K, hmask)));
    unpack_half<0>(block, hm, v);
    unpack_half<1>(block, hm, v);
  }
  static void steps(const uint8_t* block, float* step /* [16] */) {
    uint32_t w[3];
    std::memcpy(w, block + offsetof(BlockQ3_K, scales), 12);
    constexpr uint32_t kLow4 = 0x0f0f0f0fu, kLow2 = 0x03030303u;
    // Built in registers: four 4-byte stores read back as one 16-byte load
    // would not forward, and stalled every block (Q3_K ran 27% slower).
    const __m128i codes = _mm_setr_epi32(static_cast<int>((w[0] & kLow4) | (w[2] & kLow2) << 4),
                                         static_cast<int>((w[1] & kLow4) | (w[2] >> 2 & kLow2) << 4),
                                         static_cast<int>((w[0] >> 4 & kLow4) | (w[2] >> 4 & kLow2) << 4),
                                         static_cast<int>((w[1] >> 4 & kLow4) | (w[2] >> 6 & kLow2) << 4));
    const __m128i bytes = _mm_sub_epi8(codes, _mm_set1_epi8(32));
    uint16_t d16;
    std::memcpy(&d16, block + offsetof(BlockQ3_K, d), 2);
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(d16));
    _mm256_storeu_ps(step, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes))));
    _mm256_storeu_ps(step + 8, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8)))));
  }
};

// IQ4_XS: the codebook values (kIq4NlValues) of the 4-bit indices, looked
// up with vpshufb. 32 bytes of qs are two sub-blocks, one per 16-byte lane:
// low nibbles are elements 0..15 of each, high nibbles 16..31, so a lane
// exchange puts each sub-block's 32 values together. Steps d * (code - 32).
struct Iq4XsValues {
  static constexpr int64_t kBlockBytes = sizeof(BlockIq4Xs);
  static constexpr int kRunValues = 32;
  static void unpack(const uint8_t* block, int8_t* v /* [256] */) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i book = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4NlValues.data())));
    #pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockIq4Xs, qs) + 32 * p));
      const __m256i lo = _mm256_shuffle_epi8(book, _mm256_and_si256(q, low4));
      const __m256i hi = _mm256_shuffle_epi8(book, _mm256_and_si256(_mm256_srli_epi16(q, 4), low4));
      _mm256_store_si256(reinterpret_cast<__m256i*>(v + 64 * p), _mm256_permute2x128_si256(lo, hi, 0x20));
      _mm256_store_si256(reinterpret_cast<__m256i*>(v + 64 * p + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
  }
  static void steps(const uint8_t* block, float* step /* [8] */) {
    BlockIq4Xs b;
    std::memcpy(&b, block, offsetof(BlockIq4Xs, qs));  // d and the scale codes
    const float d = _cvtsh_ss(b.d);
    #pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) step[j] = d * static_cast<float>(iq4_xs_scale_code(b, j) - 32);
  }
};
#endif  // __AVX2__

// Sub-block s (kRunValues values) contributes step_s * sum_l v_l * x_l, with step_s
// rounded to float as the dequantization rounds it. Factored so, a weight
// costs one convert and one fma per token (against a convert and two fmas to
// form each weight first); the rounding of step_s * v_l (the dequantized
// weight's own) is left out, an error of the order of the float sums' own.
template <class S, class Values, int kTokens>
void signed_k_row(const uint8_t* row, int64_t blocks, const float* x, int64_t x_stride, float* y, int64_t y_stride) {
  constexpr int kRun = Values::kRunValues, kRuns = 256 / kRun;
  static_assert(S::kLanes <= kRun, "a vector within a sub-block");
  BlockTotals<S, kTokens> totals;
  for_each_unpacked_block<Values, 256>(row, blocks, [&](int64_t i, const uint8_t* block, const int8_t* v) {
    alignas(32) float step[kRuns];
    Values::steps(block, step);
    totals.template add_runs<kRun, kRuns>(v, x + i * 256, x_stride, step);
  });
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) y[t * y_stride] = totals.sum(t);
}

// A row of `blocks` blocks into floats exactly as the type's dequantize_row
// gives them (step * value, the product rounded), for many tokens' tiles.
template <class S, class Values>
void signed_k_dequantize(const uint8_t* row, int64_t blocks, float* out) {
  constexpr int kRun = Values::kRunValues;
  alignas(64) int8_t v[256];
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* block = row + i * Values::kBlockBytes;
    Values::unpack(block, v);
    alignas(32) float step[256 / kRun];
    Values::steps(block, step);
    dequantize_runs<S, kRun, 256 / kRun, false>(v, 0, step, nullptr, out + i * 256);
  }
}

// Row by row, each one sequential stream; tokens in blocks of kFloatTileTokens.
template <class S, class Values>
void signed_k_tile_dots(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride,
                        const float* /* xsum */, int tokens, int64_t k, float* y, int64_t y_stride) {
  const int64_t blocks = k / 256;
  with_token_count(tokens, [&](auto count) {
    for (int r = 0; r < rows; ++r)
      signed_k_row<S, Values, decltype(count)::value>(w + r * row_bytes, blocks, x, x_stride, y + r, y_stride);
  });
}

}  // namespace lowbit::simd
