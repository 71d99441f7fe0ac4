// FloatTileDots (float_tile_dots.h) for the 32-element blocks with a step
// and an offset: Q4_1, Q5_0 and Q5_1 (quant/q4_1.h). Written once over a
// lane type S (x86_avx2/simd_avx2.h, x86_avx512/simd_avx512.h), as
// simd_k_quant_body.h: with the values centred (v = q - kCenter, 8 or 16), a
// block contributes d * sum_l v_l x_l + (m + kCenter d) * xsum (Q4_1, Q5_1;
// xsum the block's sum of x), or d * sum_l v_l x_l alone (Q5_0, whose
// element is d (q - 16)). The unpacks use AVX2, which every build including
// this body has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels/float_tile_dots.h"
#include "kernels/simd_block_sums.h"
#include "quant/q4_1.h"

namespace lowbit::simd {

// qs[16]'s nibbles as 32 bytes: low nibbles are elements 0..15, high 16..31.
inline __m256i unpack_nibbles32(const uint8_t* qs) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i low4 = _mm_set1_epi8(0x0f);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), low4), _mm_and_si128(q, low4));
}

// Bit e of the little-endian qh[4] as 0x10 in byte e: byte e takes qh's byte
// e / 8 (vpshufb within each 16-byte lane of the broadcast word), keeps bit
// e % 8, and a compare turns it into a full byte.
inline __m256i unpack_high_bits32(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                                             _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202,
                                                                0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

struct Q4_1Values {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ4_1);
  static constexpr int kCenter = 8;
  static constexpr bool kHasMin = true;
  static void unpack(const uint8_t* block, int8_t* v /* [32] */) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(v), _mm256_sub_epi8(unpack_nibbles32(block + offsetof(BlockQ4_1, qs)),
                                                                      _mm256_set1_epi8(kCenter)));
  }
  // d and the min m of the block (element = d q + m).
  static void scales(const uint8_t* block, float* d, float* c) {
    int32_t d_m;
    std::memcpy(&d_m, block, 4);
    const __m128 dm = _mm_cvtph_ps(_mm_cvtsi32_si128(d_m));
    *d = _mm_cvtss_f32(dm);
    *c = _mm_cvtss_f32(_mm_movehdup_ps(dm));
  }
};

// The 5-bit values of Q5_0 and Q5_1 less 16.
inline void unpack_q5_centered(const uint8_t* qs, const uint8_t* qh, int8_t* v) {
  _mm256_store_si256(reinterpret_cast<__m256i*>(v),
                     _mm256_sub_epi8(_mm256_or_si256(unpack_nibbles32(qs), unpack_high_bits32(qh)), _mm256_set1_epi8(16)));
}

struct Q5_1Values {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ5_1);
  static constexpr int kCenter = 16;
  static constexpr bool kHasMin = true;
  static void unpack(const uint8_t* block, int8_t* v /* [32] */) {
    unpack_q5_centered(block + offsetof(BlockQ5_1, qs), block + offsetof(BlockQ5_1, qh), v);
  }
  static void scales(const uint8_t* block, float* d, float* c) { Q4_1Values::scales(block, d, c); }
};

struct Q5_0Values {
  static constexpr int64_t kBlockBytes = sizeof(BlockQ5_0);
  static constexpr int kCenter = 16;
  static constexpr bool kHasMin = false;  // element = d (q - 16) = d v
  static void unpack(const uint8_t* block, int8_t* v /* [32] */) {
    unpack_q5_centered(block + offsetof(BlockQ5_0, qs), block + offsetof(BlockQ5_0, qh), v);
  }
  static void scales(const uint8_t* block, float* d, float* c) {
    uint16_t d16;
    std::memcpy(&d16, block, 2);
    *d = _cvtsh_ss(d16);
    *c = 0.0f;
  }
};

static_assert(offsetof(BlockQ4_1, m) == 2 && offsetof(BlockQ5_1, m) == 2);

template <class S, class Values, int kTokens>
void q4_1_row(const uint8_t* row, int64_t blocks, const float* x, int64_t x_stride, const float* xsum, float* y,
              int64_t y_stride) {
  using V = typename S::V;
  constexpr int kVectors = 32 / S::kLanes;
  const int64_t xsum_stride = x_stride / 32;
  BlockTotals<S, kTokens> totals;
  float biases[kTokens];  // (m + kCenter d) times the blocks' x sums
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) biases[t] = 0.0f;
  for_each_unpacked_block<Values, 32>(row, blocks, [&](int64_t i, const uint8_t* block, const int8_t* v) {
    float d, m;
    Values::scales(block, &d, &m);
    V q[kVectors];
    #pragma GCC unroll 4
    for (int j = 0; j < kVectors; ++j) q[j] = S::load_i8(v + j * S::kLanes);
    // One partial total: a block's fma chain into it is short beside the
    // block's other work (a computed index would keep the totals in memory).
    totals.add(0, q, x + 32 * i, x_stride, S::set1(d));
    if constexpr (Values::kHasMin) {
      const float bias = m + static_cast<float>(Values::kCenter) * d;  // kCenter d exact, the sum rounded once
      #pragma GCC unroll 8
      for (int t = 0; t < kTokens; ++t) biases[t] += bias * xsum[t * xsum_stride + i];
    }
  });
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) y[t * y_stride] = totals.sum(t) + biases[t];
}

// A row into floats exactly as the type's dequantize_row gives them (d q + m,
// q = v + kCenter exactly; or d (q - 16) = d v), for many tokens' tiles.
template <class S, class Values>
void q4_1_dequantize(const uint8_t* row, int64_t blocks, float* out) {
  alignas(64) int8_t v[32];
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* block = row + i * Values::kBlockBytes;
    Values::unpack(block, v);
    float d, m;
    Values::scales(block, &d, &m);
    const float minus_m = -m;
    dequantize_runs<S, 32, 1, Values::kHasMin>(v, Values::kCenter, &d, &minus_m, out + 32 * i);
  }
}

// Row by row, each one sequential stream; tokens in blocks of kFloatTileTokens.
template <class S, class Values>
void q4_1_tile_dots(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride,
                    const float* xsum, int tokens, int64_t k, float* y, int64_t y_stride) {
  const int64_t blocks = k / 32;
  with_token_count(tokens, [&](auto count) {
    for (int r = 0; r < rows; ++r)
      q4_1_row<S, Values, decltype(count)::value>(w + r * row_bytes, blocks, x, x_stride, xsum, y + r, y_stride);
  });
}

}  // namespace lowbit::simd
