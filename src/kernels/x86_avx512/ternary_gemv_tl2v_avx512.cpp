// TL2V tiles x int8 activations (tl2v_tiles.h). Per 64-byte index line, two
// steps of 12 columns: one vpermb per step looks the 64 triples up as bytes
// c0 | c1 << 2 | c2 << 4, one masked subtract applies the sign bits, and each
// of the three 2-bit fields meets its 4 broadcast activations per lane in one
// vpdpbusd. Per 384 weights: 2 lookups, 2 subtracts, 1 shift, 6 masks (or
// shifts), 6 dot products, and 80 bytes read instead of I2_S's 96.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/tl2v_tile_dots.h"
#include "kernels/tl2v_tiles.h"
#include "kernels/x86_avx512/int8_dot_avx512.h"

// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here reads them.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lowbit {

using avx512::broadcast4;
using avx512::dot_u8s8;
using avx512::dot_u8s8_broadcast;

namespace {

// One token: field i is masked in place, so accumulator (h, i) collects 4^i
// times its dot and is shifted back exactly at the end; six accumulators per
// tile (step parity h, field i). |acc| <= 16 x 2 x 128 x 4 x K / 24 < 2^31
// while K < 2^21.
// More tokens: each field is shifted down to 0..2 once, shared by the tokens,
// and a token's accumulators may mix fields; fewer per token as tokens grow,
// to stay within the 32 zmm registers.
// Two tiles per call (several tokens only, see tile_dots_any): each activation
// broadcast is loaded once into a register and meets both tiles' codes, where
// with one tile every vpdpbusd loads its own (Zen 5 issues 2 vector loads per
// cycle). The 8-token loop went from 87% to 94% of the vpdpbusd peak in L1.
constexpr int accumulators(int tokens, int tiles) {
  if (tiles == 1 || tokens == 1) return tokens <= 2 ? 6 : tokens <= 4 ? 3 : 2;  // one token: 6 per tile (pair_dots)
  return tokens == 2 ? 3 : tokens <= 4 ? 2 : 1;
}
// Software prefetch this far ahead of the block being read. Without it the
// GEMV ran ~20% slower than i2s on cold weights (it reads a sixth fewer bytes
// but issues twice the instructions per byte, so fewer of its loads are in
// flight); with 4 KiB, 1.12-1.28x faster. 8 KiB: the same at 1 thread and
// 2-4% faster than 4 KiB at 2 threads, where memory latency under load is
// longer (decode-step chain; 16 KiB slower again; docs/performance.md).
// Non-temporal (prefetchnta) on AMD: the tiles are read once per token, and
// keeping them from displacing activations and other cached data was 1-8%
// faster than prefetcht0 in the decode-step chain and 1-4% end to end on Zen 5.
// On a 16-core Intel Xeon prefetcht0 decoded 2-27% faster (docs/performance.md
// "Session 8"), so Intel gets that (kNta false).
inline constexpr int64_t kPrefetchBytes = 8192;
inline constexpr int64_t kMaxBlocksInPlace = (int64_t{1} << 21) / Tl2vTiles::kBlockColumns;
inline constexpr int kOutRows = kTl2vTilesPerCall * Tl2vTiles::kRows;  // out's rows per token

// Tile u's rows for token t go to out + kOutRows * t + out_u * u.
template <bool kVnni, bool kNta, int kTokens, int kTiles, bool kInPlace>
void tile_dots(const uint8_t* tile, int64_t tile_stride, int64_t blocks, int64_t tail_lines, const int8_t* q,
               int64_t q_stride, int32_t* out, int64_t out_u = Tl2vTiles::kRows) {
  constexpr int kAcc = accumulators(kTokens, kTiles);
  static_assert(!kInPlace || (kTokens == 1 && kAcc == 6));
  // Accumulator of step parity h, field i.
  constexpr auto slot = [](int h, int i) { return kAcc == 6 ? 3 * h + i : kAcc == 3 ? i : kAcc == 2 ? h : 0; };
  const __m512i table = _mm512_load_si512(tl2v_table().triple);
  const __m512i negate = _mm512_set1_epi8(kTl2vNegate), field = _mm512_set1_epi8(3);
  __m512i acc[kTokens][kTiles][kAcc];
  #pragma GCC unroll 8
  for (auto& token_acc : acc)
    #pragma GCC unroll 2
    for (auto& tile_acc : token_acc)
      #pragma GCC unroll 6
      for (auto& a : tile_acc) a = _mm512_setzero_si512();
  const __m512i in_place_mask[3] = {_mm512_set1_epi8(0x03), _mm512_set1_epi8(0x0C), _mm512_set1_epi8(0x30)};

  const uint8_t* p = tile;
  for (int64_t b = 0; b < blocks; ++b, p += Tl2vTiles::kBlockBytes) {
    const int8_t* qb = q + b * Tl2vTiles::kBlockColumns;
    #pragma GCC unroll 2
    for (int u = 0; u < kTiles; ++u)
      #pragma GCC unroll 5
      for (int l = 0; l < 5; ++l)
        _mm_prefetch(reinterpret_cast<const char*>(p + u * tile_stride + kPrefetchBytes + 64 * l),
                     kNta ? _MM_HINT_NTA : _MM_HINT_T0);
    #pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      __m512i index[kTiles][2];
      #pragma GCC unroll 2
      for (int u = 0; u < kTiles; ++u) {
        const __m512i line = _mm512_load_si512(p + u * tile_stride + 64 * m);
        index[u][0] = line;
        index[u][1] = _mm512_srli_epi16(line, 4);  // the table ignores the other bits
      }
      #pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const int s = 2 * m + h;
        __m512i codes[kTiles][3];
        #pragma GCC unroll 2
        for (int u = 0; u < kTiles; ++u) {
          uint64_t sign_bits;
          std::memcpy(&sign_bits, p + u * tile_stride + 256 + 8 * s, 8);
          __m512i triples = _mm512_permutexvar_epi8(index[u][h], table);
          triples = _mm512_mask_sub_epi8(triples, _cvtu64_mask64(sign_bits), negate, triples);
          #pragma GCC unroll 3
          for (int i = 0; i < 3; ++i)
            codes[u][i] = kInPlace ? _mm512_and_si512(triples, in_place_mask[i])
                                   : _mm512_and_si512(_mm512_srli_epi16(triples, 2 * i), field);
        }
        #pragma GCC unroll 8
        for (int t = 0; t < kTokens; ++t) {
          const int8_t* qs = qb + t * q_stride + Tl2vTiles::kStepColumns * s;
          #pragma GCC unroll 3
          for (int i = 0; i < 3; ++i) {
            if constexpr (kTiles == 1) {
              acc[t][0][slot(h, i)] = dot_u8s8_broadcast<kVnni>(acc[t][0][slot(h, i)], codes[0][i], qs + 4 * i);
            } else {
              const __m512i a = broadcast4(qs + 4 * i);
              #pragma GCC unroll 2
              for (int u = 0; u < kTiles; ++u) acc[t][u][slot(h, i)] = dot_u8s8<kVnni>(acc[t][u][slot(h, i)], codes[u][i], a);
            }
          }
        }
      }
    }
  }

  __m512i sum[kTokens][kTiles];
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t)
    #pragma GCC unroll 2
    for (int u = 0; u < kTiles; ++u) {
      sum[t][u] = _mm512_setzero_si512();
      #pragma GCC unroll 6
      for (int a = 0; a < kAcc; ++a)  // in place, accumulator 3h + i holds 4^i times its dot (exact multiple)
        sum[t][u] = _mm512_add_epi32(sum[t][u], _mm512_maskz_srai_epi32(0xFFFF, acc[t][u][a], kInPlace ? 2 * (a % 3) : 0));
    }

  // The tail: I2S lines (i2s_tiles.h), codes at bits 2j of every byte.
  const int8_t* qt = q + blocks * Tl2vTiles::kBlockColumns;
  for (int64_t g = 0; g < tail_lines; ++g, p += Tl2vTiles::kLineBytes, qt += Tl2vTiles::kTailColumns) {
    __m512i line[kTiles];
    #pragma GCC unroll 2
    for (int u = 0; u < kTiles; ++u) line[u] = _mm512_load_si512(p + u * tile_stride);
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m512i codes[kTiles];
      #pragma GCC unroll 2
      for (int u = 0; u < kTiles; ++u) codes[u] = _mm512_and_si512(_mm512_srli_epi16(line[u], 2 * j), field);
      #pragma GCC unroll 8
      for (int t = 0; t < kTokens; ++t) {
        const __m512i a = broadcast4(qt + t * q_stride + 4 * j);
        #pragma GCC unroll 2
        for (int u = 0; u < kTiles; ++u) sum[t][u] = dot_u8s8<kVnni>(sum[t][u], codes[u], a);
      }
    }
  }
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t)
    #pragma GCC unroll 2
    for (int u = 0; u < kTiles; ++u) _mm512_storeu_si512(out + kOutRows * t + out_u * u, sum[t][u]);
}

// Tile u's rows for token t go to out + kOutRows * t + out_u * u, as tile_dots.
template <bool kVnni, bool kNta, int kTiles>
void tile_dots_tokens(const uint8_t* tile, int64_t tile_stride, int64_t blocks, int64_t tail_lines, const int8_t* q,
                      int64_t q_stride, int tokens, int32_t* out, int64_t out_u = Tl2vTiles::kRows) {
  switch (tokens) {
    case 1:
      if constexpr (kTiles == 1) {
        if (blocks <= kMaxBlocksInPlace)
          return tile_dots<kVnni, kNta, 1, 1, true>(tile, tile_stride, blocks, tail_lines, q, q_stride, out);
        return tile_dots<kVnni, kNta, 1, 1, false>(tile, tile_stride, blocks, tail_lines, q, q_stride, out);
      } else {  // one token takes its tiles one at a time (see tile_dots_any)
        for (int u = 0; u < kTiles; ++u)
          tile_dots_tokens<kVnni, kNta, 1>(tile + u * tile_stride, tile_stride, blocks, tail_lines, q, q_stride, 1,
                                           out + out_u * u);
        return;
      }
    case 2: return tile_dots<kVnni, kNta, 2, kTiles, false>(tile, tile_stride, blocks, tail_lines, q, q_stride, out, out_u);
    case 3: return tile_dots<kVnni, kNta, 3, kTiles, false>(tile, tile_stride, blocks, tail_lines, q, q_stride, out, out_u);
    case 4: return tile_dots<kVnni, kNta, 4, kTiles, false>(tile, tile_stride, blocks, tail_lines, q, q_stride, out, out_u);
    case 5: return tile_dots<kVnni, kNta, 5, kTiles, false>(tile, tile_stride, blocks, tail_lines, q, q_stride, out, out_u);
    case 6: return tile_dots<kVnni, kNta, 6, kTiles, false>(tile, tile_stride, blocks, tail_lines, q, q_stride, out, out_u);
    case 7: return tile_dots<kVnni, kNta, 7, kTiles, false>(tile, tile_stride, blocks, tail_lines, q, q_stride, out, out_u);
    default: return tile_dots<kVnni, kNta, 8, kTiles, false>(tile, tile_stride, blocks, tail_lines, q, q_stride, out, out_u);
  }
}

// Several tokens take both tiles in one pass (pp128 4-8% faster at 1 and 2
// threads than one tile per pass, alternated runs). One token takes them one
// after the other: these two neighbouring tiles at once made decode 5-15%
// slower (docs/performance.md "Session 8"). Two tiles far apart at once
// (pair_dots, a region's halves) made it faster ("Session 11").
template <bool kVnni, bool kNta>
void tile_dots_any(const uint8_t* tile, int64_t tile_stride, int tiles, int64_t blocks, int64_t tail_lines,
                   const int8_t* q, int64_t q_stride, int tokens, int32_t* out) {
  if (tiles >= 2) return tile_dots_tokens<kVnni, kNta, 2>(tile, tile_stride, blocks, tail_lines, q, q_stride, tokens, out);
  tile_dots_tokens<kVnni, kNta, 1>(tile, tile_stride, blocks, tail_lines, q, q_stride, tokens, out);
  for (int t = 0; t < tokens; ++t)
    std::fill(out + kOutRows * t + Tl2vTiles::kRows * tiles, out + kOutRows * (t + 1), 0);
}

// One token, two distant tiles side by side (Tl2vPairDots): 12 accumulators,
// each step's activation broadcast shared by both tiles' dot products.
template <bool kVnni, bool kNta>
void pair_dots(const uint8_t* tile_a, int64_t b_offset, int64_t blocks, int64_t tail_lines, const int8_t* q,
               int32_t* out, int64_t out_b) {
  if (blocks <= kMaxBlocksInPlace)
    return tile_dots<kVnni, kNta, 1, 2, true>(tile_a, b_offset, blocks, tail_lines, q, 0, out, out_b);
  tile_dots<kVnni, kNta, 1, 2, false>(tile_a, b_offset, blocks, tail_lines, q, 0, out, out_b);
}

// Several tokens, two distant tiles side by side (Tl2vPairTokenDots): the
// two-tile loop with the second tile b_offset bytes on.
template <bool kVnni, bool kNta>
void pair_token_dots(const uint8_t* tile_a, int64_t b_offset, int64_t blocks, int64_t tail_lines, const int8_t* q,
                     int64_t q_stride, int tokens, int32_t* out, int64_t out_b) {
  tile_dots_tokens<kVnni, kNta, 2>(tile_a, b_offset, blocks, tail_lines, q, q_stride, tokens, out, out_b);
}

}  // namespace

Tl2vPairTokenDots tl2v_pair_token_dots_avx512(bool vnni, bool nta_prefetch) {
  if (vnni) return nta_prefetch ? pair_token_dots<true, true> : pair_token_dots<true, false>;
  return nta_prefetch ? pair_token_dots<false, true> : pair_token_dots<false, false>;
}

Tl2vPairDots tl2v_pair_dots_avx512(bool vnni, bool nta_prefetch) {
  if (vnni) return nta_prefetch ? pair_dots<true, true> : pair_dots<true, false>;
  return nta_prefetch ? pair_dots<false, true> : pair_dots<false, false>;
}

Tl2vTileDots tl2v_tile_dots_avx512(bool vnni, bool nta_prefetch) {
  if (vnni) return nta_prefetch ? tile_dots_any<true, true> : tile_dots_any<true, false>;
  return nta_prefetch ? tile_dots_any<false, true> : tile_dots_any<false, false>;
}

}  // namespace lowbit
