// Q2_K, Q4_K and Q5_K rows . int8 activations with AVX2 (k_quant_q8k.h;
// Q6_K's are in q6_k_q8k_avx2.cpp). vpmaddubsw multiplies 32 unsigned values
// (0..3, 0..15 or 0..31) by their 32 activations (pair sums <= 2 x 31 x 128:
// no saturation), and vpmaddwd by the sub-block's scale (a vpshufb of the
// block's scales as int16) adds the pairs into int32 lanes. The mins meet the
// activations' sub-block sums in vpmulld; both sums are exact, and the block's
// float arithmetic is the reference's.
//   Q4_K / Q5_K: each 32 bytes of nibbles hold sub-blocks 2p (low nibbles)
//     and 2p + 1 (high), Q5_K's fifth bits in qh; 8 sub-blocks of 32.
//   Q2_K: bits 2j..2j+1 of qs[32h + l] are value 128h + 32j + l, so one shift
//     and mask of a 32-byte half gives sub-blocks 8h + 2j (its low 16 bytes)
//     and 8h + 2j + 1 (its high 16); 16 sub-blocks of 16.
#include <immintrin.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/k_quant_q8k.h"
#include "kernels/x86_avx2/q8k_two_pass.h"
#include "kernels/x86_avx2/token_count.h"
#include "quant/q2_k.h"
#include "quant/q4_k.h"
#include "quant/q5_k.h"

namespace lowbit {

namespace {

// The 8 six-bit scales and mins of a Q4_K block (quant/q4_k.h's layout) as
// bytes, from its scales[12] taken as three 32-bit words A, B, C:
// sc[0..3] = A & 63, m[0..3] = B & 63, and for j = 4..7 the low 4 bits from C
// (low nibbles for sc, high for m) and bits 4-5 from the top 2 bits of A (sc)
// or B (m).
inline void scales_and_mins(const uint8_t* scales, uint64_t* sc, uint64_t* m) {
  uint32_t a, b, c;
  std::memcpy(&a, scales, 4);
  std::memcpy(&b, scales + 4, 4);
  std::memcpy(&c, scales + 8, 4);
  const uint32_t low6 = 0x3F3F3F3F, nibble = 0x0F0F0F0F, top2 = 0x30303030;
  const uint32_t sc_hi = (c & nibble) | ((a >> 2) & top2), m_hi = ((c >> 4) & nibble) | ((b >> 2) & top2);
  *sc = (a & low6) | uint64_t{sc_hi} << 32;
  *m = (b & low6) | uint64_t{m_hi} << 32;
}

// vpshufb controls: kLanes.bytes[j] puts int16 lane j of each 128-bit half in
// every lane of it.
struct LanePatterns {
  alignas(32) uint8_t bytes[8][32];
};
constexpr LanePatterns lane_patterns() {
  LanePatterns p{};
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 32; ++i) p.bytes[j][i] = static_cast<uint8_t>(2 * j + (i & 1));
  return p;
}
constexpr LanePatterns kLanes = lane_patterns();

inline __m256i lane_broadcast(__m256i v, int j) {
  return _mm256_shuffle_epi8(v, _mm256_load_si256(reinterpret_cast<const __m256i*>(kLanes.bytes[j])));
}

// Bit b (0..7) of each byte of v moved to bit 4, the rest cleared.
inline __m256i bit_to_4(__m256i v, int b) {
  const __m256i moved = b <= 4 ? _mm256_slli_epi16(v, 4 - b) : _mm256_srli_epi16(v, b - 4);
  return _mm256_and_si256(moved, _mm256_set1_epi8(0x10));  // 16-bit shifts: the mask drops the other byte's bits
}

// A block's 8 int32 lanes of I and of M folded into 4 whose pairs add up to
// them: [I, I, M, M].
inline __m128i sum_pairs(__m256i dot, __m256i offset) {
  const __m256i pairs = _mm256_hadd_epi32(dot, offset);  // per half: dot, dot, offset, offset
  return _mm_add_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
}

// A block's integer sums for kTokens tokens (activations qb[k], sub-block
// sums bsum[k]), as lanes whose pairs add up to them: out[k][0] + out[k][1] =
// I, out[k][2] + out[k][3] = M (quant/q4_k.h, dot_q4_k_q8k). The values and
// the scales' broadcasts are made once for all the tokens. Block: BlockQ4_K or
// BlockQ5_K, whose value l + 64p + 32s takes bit 2p + s of qh[l] as its bit 4.
template <class Block, int kTokens>
inline void block_sums(const uint8_t* block, const int8_t* const* qb, const int32_t* const* bsum, __m256i nibble,
                       __m128i* out) {
  constexpr bool kFive = std::is_same_v<Block, BlockQ5_K>;
  const uint8_t* qs = block + offsetof(Block, qs);
  uint64_t sc, m;
  scales_and_mins(block + offsetof(Block, scales), &sc, &m);
  __m256i qh = _mm256_setzero_si256();
  if constexpr (kFive) qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + offsetof(BlockQ5_K, qh)));
  // The 8 scales as int16, in both 128-bit halves.
  const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(sc))));
  __m256i dot[kTokens];
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) dot[k] = _mm256_setzero_si256();
  #pragma GCC unroll 4
  for (int p = 0; p < 4; ++p) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * p));
    __m256i lo = _mm256_and_si256(w, nibble), hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), nibble);
    if constexpr (kFive) {
      lo = _mm256_or_si256(lo, bit_to_4(qh, 2 * p));
      hi = _mm256_or_si256(hi, bit_to_4(qh, 2 * p + 1));
    }
    const __m256i sc_lo = lane_broadcast(sc16, 2 * p), sc_hi = lane_broadcast(sc16, 2 * p + 1);
    #pragma GCC unroll 4
    for (int k = 0; k < kTokens; ++k) {
      const __m256i pl = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb[k] + 64 * p)));
      const __m256i ph =
          _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb[k] + 64 * p + 32)));
      dot[k] = _mm256_add_epi32(dot[k], _mm256_add_epi32(_mm256_madd_epi16(pl, sc_lo), _mm256_madd_epi16(ph, sc_hi)));
    }
  }
  const __m256i mins = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(m)));
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) {
    out[k] = sum_pairs(dot[k], _mm256_mullo_epi32(mins, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsum[k]))));
  }
}

// block_sums for a Q2_K block: the 16 step codes as int16 with the even
// sub-blocks' in the low 128-bit half and the odd ones' in the high (word
// 4h + j: sub-blocks 8h + 2j | 8h + 2j + 1), so one vpshufb gives the scales
// of one shifted half's two sub-blocks.
template <int kTokens>
inline void q2_k_block_sums(const uint8_t* block, const int8_t* const* qb, const int32_t* const* bsum, __m128i* out) {
  const uint8_t* qs = block + offsetof(BlockQ2_K, qs);
  const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + offsetof(BlockQ2_K, scales)));
  const __m128i low4 = _mm_set1_epi8(15);
  const __m128i even_odd = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(_mm_and_si128(codes, low4), even_odd));
  const __m256i three = _mm256_set1_epi8(3);
  __m256i dot[kTokens];
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) dot[k] = _mm256_setzero_si256();
  #pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * h));
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256i v = _mm256_and_si256(_mm256_srli_epi16(w, 2 * j), three);
      const __m256i sc = lane_broadcast(sc16, 4 * h + j);
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k) {
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb[k] + 128 * h + 32 * j));
        dot[k] = _mm256_add_epi32(dot[k], _mm256_madd_epi16(_mm256_maddubs_epi16(v, x), sc));
      }
    }
  }
  const __m128i mins = _mm_and_si128(_mm_srli_epi16(codes, 4), low4);
  const __m256i m_lo = _mm256_cvtepu8_epi32(mins), m_hi = _mm256_cvtepu8_epi32(_mm_unpackhi_epi64(mins, mins));
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) {
    const __m256i* s = reinterpret_cast<const __m256i*>(bsum[k]);
    out[k] = sum_pairs(dot[k], _mm256_add_epi32(_mm256_mullo_epi32(m_lo, _mm256_loadu_si256(s)),
                                                _mm256_mullo_epi32(m_hi, _mm256_loadu_si256(s + 1))));
  }
}

// kTokens tokens' dots with one row, in two passes per chunk (q8k_two_pass.h).
template <class Block, int kTokens>
void rows_q8k(const uint8_t* row, int64_t blocks, const int8_t* const* q, const int32_t* const* bsum,
              const float* const* dx, float* y) {
  constexpr bool kQ2 = std::is_same_v<Block, BlockQ2_K>;
  constexpr int64_t kSumsPerBlock = kQ2 ? 16 : 8;  // activation sums per sub-block
  static_assert(offsetof(Block, dmin) == offsetof(Block, d) + 2);
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  alignas(16) int32_t sums[kTokens][avx2::kQ8KChunk][4];
  for (int k = 0; k < kTokens; ++k) y[k] = 0;
  avx2::in_two_passes(
      blocks,
      [&](int64_t i, int64_t j) {
        const int8_t* qb[kTokens];
        const int32_t* bs[kTokens];
        for (int k = 0; k < kTokens; ++k) qb[k] = q[k] + i * 256, bs[k] = bsum[k] + kSumsPerBlock * i;
        __m128i out[kTokens];
        if constexpr (kQ2)
          q2_k_block_sums<kTokens>(row + i * static_cast<int64_t>(sizeof(Block)), qb, bs, out);
        else
          block_sums<Block, kTokens>(row + i * static_cast<int64_t>(sizeof(Block)), qb, bs, nibble, out);
        for (int k = 0; k < kTokens; ++k) _mm_store_si128(reinterpret_cast<__m128i*>(sums[k][j]), out[k]);
      },
      [&](int64_t i, int64_t j) {
        // d and dmin (4 bytes) converted by F16C: exact, as fp16_to_float.
        uint32_t d_dmin;
        std::memcpy(&d_dmin, row + i * static_cast<int64_t>(sizeof(Block)) + offsetof(Block, d), 4);
        const __m128 scales = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(d_dmin)));
        for (int k = 0; k < kTokens; ++k) {
          const float d = _mm_cvtss_f32(scales) * dx[k][i], dmin = _mm_cvtss_f32(_mm_movehdup_ps(scales)) * dx[k][i];
          const int32_t block_dot = sums[k][j][0] + sums[k][j][1], block_offset = sums[k][j][2] + sums[k][j][3];
          y[k] += static_cast<float>(block_dot) * d - static_cast<float>(block_offset) * dmin;
        }
      });
}

}  // namespace

void q2_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* bsum, const float* const* dx, float* y) {
  avx2::with_token_count(tokens, [&](auto n) { rows_q8k<BlockQ2_K, decltype(n)::value>(row, blocks, q, bsum, dx, y); });
}

void q4_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* bsum, const float* const* dx, float* y) {
  avx2::with_token_count(tokens, [&](auto n) { rows_q8k<BlockQ4_K, decltype(n)::value>(row, blocks, q, bsum, dx, y); });
}

void q5_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* bsum, const float* const* dx, float* y) {
  avx2::with_token_count(tokens, [&](auto n) { rows_q8k<BlockQ5_K, decltype(n)::value>(row, blocks, q, bsum, dx, y); });
}

}  // namespace lowbit
