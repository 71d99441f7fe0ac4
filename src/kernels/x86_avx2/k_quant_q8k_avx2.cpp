// Q2_K, Q3_K, Q4_K, Q5_K and IQ4_XS rows . int8 activations with AVX2
// (k_quant_q8k.h; Q6_K's are in q6_k_q8k_avx2.cpp). vpmaddubsw multiplies 32 unsigned values
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
//   Q3_K: Q2_K's low bits and shifts, with hmask's bit 4h + j as bit 2: the
//     unsigned value u = v + 4 (0..7). The -4 of every value goes with the
//     activations' sub-block sums, which the signed scales multiply in
//     vpmulld as Q2_K's mins: I = sum sc * (u . q) - sum sc * 4 * sum(q).
//   IQ4_XS, in iq4_xs_pair_layout: group p's low nibbles are sub-block 2p's
//     indices, its high nibbles sub-block 2p + 1's, so each unpacked vector
//     is one whole sub-block in element order. vpshufb looks the codebook
//     values up; vpmaddubsw takes their magnitudes and the activations with
//     their signs (vpsignb), two signed vectors' product as llama.cpp takes it
//     (pair sums <= 2 x 127 x 128).
#include <immintrin.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/k_quant_q8k.h"
#include "kernels/x86_avx2/q8k_two_pass.h"
#include "kernels/x86_avx2/token_count.h"
#include "quant/q2_k.h"
#include "quant/iq4_nl.h"
#include "quant/iq4_xs.h"
#include "quant/q3_k.h"
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

// Bit b (0..7) of each byte of v moved to bit 2, the rest cleared.
inline __m256i bit_to_2(__m256i v, int b) {
  const __m256i moved = b <= 2 ? _mm256_slli_epi16(v, 2 - b) : _mm256_srli_epi16(v, b - 2);
  return _mm256_and_si256(moved, _mm256_set1_epi8(0x04));
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

// block_sums for the 2-bit-plane blocks (Q2_K, Q3_K): 16 sub-blocks of 16,
// the value of element 128h + 32j + l in bits 2j..2j+1 of qs[32h + l] (and,
// with kHigh, bit 4h + j of hmask[l] as its bit 2). steps[s] and offsets[s]
// are sub-block s's int8 step and offset factors: out[k]'s pairs add up to
// sum steps[s] * (v . q) and sum offsets[s] * bsum[k][s]. The steps go as
// int16 with the even sub-blocks' in the low 128-bit half and the odd ones'
// in the high (word 4h + j: sub-blocks 8h + 2j | 8h + 2j + 1), so one vpshufb
// gives the scales of one shifted half's two sub-blocks.
template <int kTokens, bool kHigh>
inline void two_bit_block_sums(const uint8_t* qs, const uint8_t* hmask, __m128i steps, __m128i offsets,
                               const int8_t* const* qb, const int32_t* const* bsum, __m128i* out) {
  const __m128i even_odd = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(steps, even_odd));
  const __m256i three = _mm256_set1_epi8(3);
  __m256i hm = _mm256_setzero_si256();
  if constexpr (kHigh) hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hmask));
  __m256i dot[kTokens];
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) dot[k] = _mm256_setzero_si256();
  #pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * h));
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m256i v = _mm256_and_si256(_mm256_srli_epi16(w, 2 * j), three);
      if constexpr (kHigh) v = _mm256_or_si256(v, bit_to_2(hm, 4 * h + j));
      const __m256i sc = lane_broadcast(sc16, 4 * h + j);
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k) {
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb[k] + 128 * h + 32 * j));
        dot[k] = _mm256_add_epi32(dot[k], _mm256_madd_epi16(_mm256_maddubs_epi16(v, x), sc));
      }
    }
  }
  const __m256i off_lo = _mm256_cvtepi8_epi32(offsets);
  const __m256i off_hi = _mm256_cvtepi8_epi32(_mm_unpackhi_epi64(offsets, offsets));
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) {
    const __m256i* s = reinterpret_cast<const __m256i*>(bsum[k]);
    out[k] = sum_pairs(dot[k], _mm256_add_epi32(_mm256_mullo_epi32(off_lo, _mm256_loadu_si256(s)),
                                                _mm256_mullo_epi32(off_hi, _mm256_loadu_si256(s + 1))));
  }
}

// Q2_K: step codes in the low nibbles of scales[16], min codes in the high;
// out[k] as block_sums' (I, M).
template <int kTokens>
inline void q2_k_block_sums(const uint8_t* block, const int8_t* const* qb, const int32_t* const* bsum, __m128i* out) {
  const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + offsetof(BlockQ2_K, scales)));
  const __m128i low4 = _mm_set1_epi8(15);
  two_bit_block_sums<kTokens, false>(block + offsetof(BlockQ2_K, qs), nullptr, _mm_and_si128(codes, low4),
                                     _mm_and_si128(_mm_srli_epi16(codes, 4), low4), qb, bsum, out);
}

// The 16 sub-block scales (code - 32) of a Q3_K block as int8, in sub-block
// order, from its scales[12] taken as three 32-bit words A, B, C: codes 4w..4w
// + 3 take their low 4 bits from A's (w = 0) or B's (w = 1) low nibbles, then
// A's (w = 2) or B's (w = 3) high nibbles, and their high 2 bits from bits 2w,
// 2w + 1 of C's bytes.
inline __m128i q3_k_scales(const uint8_t* scales) {
  uint32_t a, b, c;
  std::memcpy(&a, scales, 4);
  std::memcpy(&b, scales + 4, 4);
  std::memcpy(&c, scales + 8, 4);
  const uint32_t low4 = 0x0F0F0F0F, two = 0x03030303;
  const __m128i codes = _mm_setr_epi32(static_cast<int>((a & low4) | (c & two) << 4),
                                       static_cast<int>((b & low4) | ((c >> 2) & two) << 4),
                                       static_cast<int>(((a >> 4) & low4) | ((c >> 4) & two) << 4),
                                       static_cast<int>(((b >> 4) & low4) | ((c >> 6) & two) << 4));
  return _mm_sub_epi8(codes, _mm_set1_epi8(32));
}

// Q3_K: the unsigned u = v + 4 (0..7) against the signed scales, and the -4
// as the scales times bsum[k][s] = 4 * (sub-block s's activation sum): out[k]'s
// pairs add up to sum sc * (u . q) and sum sc * bsum; I is their difference.
template <int kTokens>
inline void q3_k_block_sums(const uint8_t* block, const int8_t* const* qb, const int32_t* const* bsum, __m128i* out) {
  const __m128i scales = q3_k_scales(block + offsetof(BlockQ3_K, scales));
  two_bit_block_sums<kTokens, true>(block + offsetof(BlockQ3_K, qs), block + offsetof(BlockQ3_K, hmask), scales,
                                    scales, qb, bsum, out);
}

// An IQ4_XS block's 8 scale codes as bytes (byte j = code j): nibble j of
// scales_l and bits 2j, 2j + 1 of scales_h, spread out in scalar registers
// (the integer pipes are idle in these loops; no pdep, microcoded on Zen 2).
inline uint64_t iq4_xs_codes(uint32_t scales_l, uint16_t scales_h) {
  uint64_t lo = scales_l;  // nibble j -> low nibble of byte j
  lo = (lo & 0xFFFF) | (lo & 0xFFFF0000) << 16;
  lo = (lo & 0x000000FF000000FF) | (lo & 0x0000FF000000FF00) << 8;
  lo = (lo & 0x000F000F000F000F) | (lo & 0x00F000F000F000F0) << 4;
  uint64_t hi = scales_h;  // bits 2j, 2j + 1 -> bits 0, 1 of byte j
  hi = (hi & 0xFF) | (hi & 0xFF00) << 24;
  hi = (hi & 0x0000000F0000000F) | (hi & 0x000000F0000000F0) << 12;
  hi = (hi & 0x0003000300030003) | (hi & 0x000C000C000C000C) << 6;
  return lo | hi << 4;
}

// block_sums for an IQ4_XS block in iq4_xs_pair_layout: out[k]'s first two
// lanes add up to I (its last two are 0).
template <int kTokens>
inline void iq4_xs_block_sums(const uint8_t* block, const int8_t* const* qb, __m128i* out) {
  const uint8_t* qs = block + offsetof(BlockIq4Xs, qs);
  uint32_t scales_l;
  uint16_t scales_h;
  std::memcpy(&scales_l, block + offsetof(BlockIq4Xs, scales_l), 4);
  std::memcpy(&scales_h, block + offsetof(BlockIq4Xs, scales_h), 2);
  const __m128i scales =
      _mm_sub_epi8(_mm_cvtsi64_si128(static_cast<int64_t>(iq4_xs_codes(scales_l, scales_h))), _mm_set1_epi8(32));
  const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(scales));  // word j: sub-block j's scale
  const __m256i book =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4NlValues.data())));
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  __m256i dot[kTokens];
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) dot[k] = _mm256_setzero_si256();
  #pragma GCC unroll 4
  for (int p = 0; p < 4; ++p) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * p));
    const __m256i va = _mm256_shuffle_epi8(book, _mm256_and_si256(w, nibble));
    const __m256i vb = _mm256_shuffle_epi8(book, _mm256_and_si256(_mm256_srli_epi16(w, 4), nibble));
    const __m256i abs_a = _mm256_abs_epi8(va), abs_b = _mm256_abs_epi8(vb);
    const __m256i sc_a = lane_broadcast(sc16, 2 * p), sc_b = lane_broadcast(sc16, 2 * p + 1);
    #pragma GCC unroll 4
    for (int k = 0; k < kTokens; ++k) {
      const __m256i xa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb[k] + 64 * p));
      const __m256i xb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb[k] + 64 * p + 32));
      const __m256i pa = _mm256_maddubs_epi16(abs_a, _mm256_sign_epi8(xa, va));
      const __m256i pb = _mm256_maddubs_epi16(abs_b, _mm256_sign_epi8(xb, vb));
      dot[k] = _mm256_add_epi32(dot[k], _mm256_add_epi32(_mm256_madd_epi16(pa, sc_a), _mm256_madd_epi16(pb, sc_b)));
    }
  }
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) out[k] = sum_pairs(dot[k], _mm256_setzero_si256());
}

// kTokens tokens' dots with one row, in two passes per chunk (q8k_two_pass.h).
template <class Block, int kTokens>
void rows_q8k(const uint8_t* row, int64_t blocks, const int8_t* const* q, const int32_t* const* bsum,
              const float* const* dx, float* y) {
  constexpr bool kQ2 = std::is_same_v<Block, BlockQ2_K>, kQ3 = std::is_same_v<Block, BlockQ3_K>;
  constexpr bool kIq4Xs = std::is_same_v<Block, BlockIq4Xs>;
  constexpr bool kNoMin = kQ3 || kIq4Xs;                  // one signed scale per sub-block
  constexpr int64_t kSumsPerBlock = kQ2 || kQ3 ? 16 : 8;  // activation sums per sub-block (none for IQ4_XS)
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  alignas(16) int32_t sums[kTokens][avx2::kQ8KChunk][4];
  for (int k = 0; k < kTokens; ++k) y[k] = 0;
  avx2::in_two_passes(
      blocks,
      [&](int64_t i, int64_t j) {
        const int8_t* qb[kTokens];
        const int32_t* bs[kTokens] = {};
        for (int k = 0; k < kTokens; ++k) {
          qb[k] = q[k] + i * 256;
          if constexpr (!kIq4Xs) bs[k] = bsum[k] + kSumsPerBlock * i;
        }
        __m128i out[kTokens];
        const uint8_t* block = row + i * static_cast<int64_t>(sizeof(Block));
        if constexpr (kQ2)
          q2_k_block_sums<kTokens>(block, qb, bs, out);
        else if constexpr (kQ3)
          q3_k_block_sums<kTokens>(block, qb, bs, out);
        else if constexpr (kIq4Xs)
          iq4_xs_block_sums<kTokens>(block, qb, out);
        else
          block_sums<Block, kTokens>(block, qb, bs, nibble, out);
        for (int k = 0; k < kTokens; ++k) _mm_store_si128(reinterpret_cast<__m128i*>(sums[k][j]), out[k]);
      },
      [&](int64_t i, int64_t j) {
        const uint8_t* block = row + i * static_cast<int64_t>(sizeof(Block));
        if constexpr (kNoMin) {
          // Signed scales, no min: y += float(I) * (d * dx), dot_q3_k_q8k's and dot_iq4_xs_q8k's step.
          uint16_t dh;
          std::memcpy(&dh, block + offsetof(Block, d), 2);
          const float d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(dh)));  // exact, as fp16_to_float
          for (int k = 0; k < kTokens; ++k) {
            const int32_t block_dot = (sums[k][j][0] + sums[k][j][1]) - (sums[k][j][2] + sums[k][j][3]);
            y[k] += static_cast<float>(block_dot) * (d * dx[k][i]);
          }
        } else {
          static_assert(offsetof(Block, dmin) == offsetof(Block, d) + 2);
          // d and dmin (4 bytes) converted by F16C: exact, as fp16_to_float.
          uint32_t d_dmin;
          std::memcpy(&d_dmin, block + offsetof(Block, d), 4);
          const __m128 scales = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(d_dmin)));
          for (int k = 0; k < kTokens; ++k) {
            const float d = _mm_cvtss_f32(scales) * dx[k][i], dmin = _mm_cvtss_f32(_mm_movehdup_ps(scales)) * dx[k][i];
            const int32_t block_dot = sums[k][j][0] + sums[k][j][1], block_offset = sums[k][j][2] + sums[k][j][3];
            y[k] += static_cast<float>(block_dot) * d - static_cast<float>(block_offset) * dmin;
          }
        }
      });
}

}  // namespace

void q2_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* bsum, const float* const* dx, float* y) {
  avx2::with_token_count(tokens, [&](auto n) { rows_q8k<BlockQ2_K, decltype(n)::value>(row, blocks, q, bsum, dx, y); });
}

void q3_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* bsum, const float* const* dx, float* y) {
  avx2::with_token_count(tokens, [&](auto n) { rows_q8k<BlockQ3_K, decltype(n)::value>(row, blocks, q, bsum, dx, y); });
}

void iq4_xs_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                            const int32_t* const* /*sums: none*/, const float* const* dx, float* y) {
  avx2::with_token_count(tokens,
                         [&](auto n) { rows_q8k<BlockIq4Xs, decltype(n)::value>(row, blocks, q, nullptr, dx, y); });
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
