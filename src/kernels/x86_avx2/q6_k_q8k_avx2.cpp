// Q6_K row . int8 activations with AVX2 (k_quant_q8k.h). Per half-block of
// 128, 64 bytes of ql and 32 of qh give four 32-byte vectors of values 0..63
// (the layout of quant/q6_k.h); vector k holds sub-blocks 8h + 2k (low 128
// bits) and 8h + 2k + 1 (high). vpmaddubsw multiplies the values (unsigned) by
// their activations (pair sums <= 2 x 63 x 127), vpmaddwd by the sub-blocks'
// scales (int16, one per 128-bit half) adds the pairs into int32 lanes. The
// values' -32 is taken once per sub-block: 32 x scale x the activations' sum
// over it. Both sums exact; the block's float arithmetic is the reference's.
#include <immintrin.h>

#include <cstddef>
#include <cstring>

#include "kernels/k_quant_q8k.h"
#include "kernels/x86_avx2/q8k_two_pass.h"
#include "kernels/x86_avx2/token_count.h"
#include "quant/q6_k.h"

namespace lowbit {

namespace {

// vpshufb controls: kPairs.bytes[k] puts int16 lane 2k of the low 128 bits in
// every lane of the low half, and lane 2k + 1 of the high 128 bits in every
// lane of the high half.
struct PairPatterns {
  alignas(32) uint8_t bytes[4][32];
};
constexpr PairPatterns pair_patterns() {
  PairPatterns p{};
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 32; ++i) p.bytes[k][i] = static_cast<uint8_t>(2 * (2 * k + (i >= 16 ? 1 : 0)) + (i & 1));
  return p;
}
constexpr PairPatterns kPairs = pair_patterns();

// A block's integer sums I = sum_j scales[j] * sum over sub-block j of
// (v - 32) q, for kTokens tokens (activations qb[k], sub-block sums bsum16[k]);
// the values and the scales' broadcasts are made once for all the tokens.
template <int kTokens>
inline void block_sums(const uint8_t* block, const int8_t* const* qb, const int32_t* const* bsum16, int32_t* out) {
  const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
  const __m128i scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + offsetof(BlockQ6_K, scales)));
  __m256i dot[kTokens];
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) dot[k] = _mm256_setzero_si256();
  #pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = block + offsetof(BlockQ6_K, ql) + 64 * h;
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
    const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ6_K, qh) + 32 * h));
    const __m256i v[4] = {
        _mm256_or_si256(_mm256_and_si256(a, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), bits45)),
        _mm256_or_si256(_mm256_and_si256(c, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), bits45)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low4), _mm256_and_si256(hb, bits45)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(c, 4), low4),
                        _mm256_and_si256(_mm256_srli_epi16(hb, 2), bits45))};
    // This half's 8 scales as int16, in both 128-bit halves.
    const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + offsetof(BlockQ6_K, scales) + 8 * h))));
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256i sc = _mm256_shuffle_epi8(sc16, _mm256_load_si256(reinterpret_cast<const __m256i*>(kPairs.bytes[j])));
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k) {
        const __m256i p = _mm256_maddubs_epi16(
            v[j], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb[k] + 128 * h + 32 * j)));
        dot[k] = _mm256_add_epi32(dot[k], _mm256_madd_epi16(p, sc));
      }
    }
  }
  const __m256i sc_lo = _mm256_cvtepi8_epi32(scales), sc_hi = _mm256_cvtepi8_epi32(_mm_srli_si128(scales, 8));
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) {
    // 32 x sum_j scales[j] * (the activations' sum over sub-block j).
    const __m256i offset = _mm256_add_epi32(
        _mm256_mullo_epi32(sc_lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsum16[k]))),
        _mm256_mullo_epi32(sc_hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsum16[k] + 8))));
    const __m256i total = _mm256_sub_epi32(dot[k], _mm256_slli_epi32(offset, 5));
    const __m128i half = _mm_add_epi32(_mm256_castsi256_si128(total), _mm256_extracti128_si256(total, 1));
    const __m128i pair = _mm_add_epi32(half, _mm_unpackhi_epi64(half, half));
    out[k] = _mm_cvtsi128_si32(_mm_add_epi32(pair, _mm_shuffle_epi32(pair, 1)));
  }
}

// kTokens tokens' dots with one row, in two passes per chunk (q8k_two_pass.h).
template <int kTokens>
void rows_q8k(const uint8_t* row, int64_t blocks, const int8_t* const* q, const int32_t* const* bsum16,
              const float* const* dx, float* y) {
  int32_t sums[avx2::kQ8KChunk][kTokens];
  for (int k = 0; k < kTokens; ++k) y[k] = 0;
  avx2::in_two_passes(
      blocks,
      [&](int64_t i, int64_t j) {
        const int8_t* qb[kTokens];
        const int32_t* bs[kTokens];
        for (int k = 0; k < kTokens; ++k) qb[k] = q[k] + i * kQ6_KBlockSize, bs[k] = bsum16[k] + 16 * i;
        block_sums<kTokens>(row + i * static_cast<int64_t>(sizeof(BlockQ6_K)), qb, bs, sums[j]);
      },
      [&](int64_t i, int64_t j) {
        uint16_t d16;
        std::memcpy(&d16, row + i * static_cast<int64_t>(sizeof(BlockQ6_K)) + offsetof(BlockQ6_K, d), 2);
        const float d = _cvtsh_ss(d16);  // F16C: exact, as fp16_to_float
        for (int k = 0; k < kTokens; ++k) y[k] += static_cast<float>(sums[j][k]) * (d * dx[k][i]);
      });
}

}  // namespace

void q6_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* bsum16, const float* const* dx, float* y) {
  avx2::with_token_count(tokens, [&](auto n) { rows_q8k<decltype(n)::value>(row, blocks, q, bsum16, dx, y); });
}

}  // namespace lowbit
