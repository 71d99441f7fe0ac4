// TL2V tiles x int8 activations (tl2v_tiles.h). Per 64-byte index line, two
// steps of 12 columns: one vpermb per step looks the 64 triples up as bytes
// c0 | c1 << 2 | c2 << 4, one masked subtract applies the sign bits, and each
// of the three 2-bit fields meets its 4 broadcast activations per lane in one
// vpdpbusd. Per 384 weights: 2 lookups, 2 subtracts, 1 shift, 6 masks (or
// shifts), 6 dot products, and 80 bytes read instead of I2_S's 96.
#include <immintrin.h>

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
// times its dot and is shifted back exactly at the end; six accumulators
// (step parity h, field i) give six vpdpbusd chains (4-cycle latency, 2 per
// cycle). |acc| <= 16 x 2 x 128 x 4 x K / 24 < 2^31 while K < 2^21.
// More tokens: each field is shifted down to 0..2 once, shared by the tokens,
// and a token's accumulators may mix fields; fewer per token as tokens grow,
// to stay within the 32 zmm registers.
constexpr int accumulators(int tokens) { return tokens == 1 ? 6 : tokens == 2 ? 6 : tokens <= 4 ? 3 : 2; }
// Software prefetch this far ahead of the block being read. Without it the
// GEMV ran ~20% slower than i2s on cold weights (it reads a sixth fewer bytes
// but issues twice the instructions per byte, so fewer of its loads are in
// flight); with 4 KiB, 1.12-1.28x faster. 8 KiB: the same at 1 thread and
// 2-4% faster than 4 KiB at 2 threads, where memory latency under load is
// longer (decode-step chain; 16 KiB slower again; docs/performance.md).
// Non-temporal (prefetchnta): the tiles are read once per token, and keeping
// them from displacing activations and other cached data was 1-8% faster
// than prefetcht0 in the decode-step chain and 1-4% end to end.
inline constexpr int64_t kPrefetchBytes = 8192;
inline constexpr int64_t kMaxBlocksInPlace = (int64_t{1} << 21) / Tl2vTiles::kBlockColumns;

template <bool kVnni, int kTokens, bool kInPlace>
void tile_dots(const uint8_t* tile, int64_t blocks, int64_t tail_lines, const int8_t* q, int64_t q_stride,
               int32_t* out) {
  constexpr int kAcc = accumulators(kTokens);
  static_assert(!kInPlace || kAcc == 6);
  // Accumulator of step parity h, field i.
  constexpr auto slot = [](int h, int i) { return kAcc == 6 ? 3 * h + i : kAcc == 3 ? i : h; };
  const __m512i table = _mm512_load_si512(tl2v_table().triple);
  const __m512i negate = _mm512_set1_epi8(kTl2vNegate), field = _mm512_set1_epi8(3);
  __m512i acc[kTokens][kAcc];
  #pragma GCC unroll 8
  for (auto& token_acc : acc)
    #pragma GCC unroll 6
    for (auto& a : token_acc) a = _mm512_setzero_si512();
  const __m512i in_place_mask[3] = {_mm512_set1_epi8(0x03), _mm512_set1_epi8(0x0C), _mm512_set1_epi8(0x30)};

  const uint8_t* p = tile;
  for (int64_t b = 0; b < blocks; ++b, p += Tl2vTiles::kBlockBytes) {
    const int8_t* qb = q + b * Tl2vTiles::kBlockColumns;
    #pragma GCC unroll 5
    for (int l = 0; l < 5; ++l) _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes + 64 * l), _MM_HINT_NTA);
    #pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const __m512i line = _mm512_load_si512(p + 64 * m);
      const __m512i index[2] = {line, _mm512_srli_epi16(line, 4)};  // the table ignores the other bits
      #pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const int s = 2 * m + h;
        uint64_t sign_bits;
        std::memcpy(&sign_bits, p + 256 + 8 * s, 8);
        __m512i triples = _mm512_permutexvar_epi8(index[h], table);
        triples = _mm512_mask_sub_epi8(triples, _cvtu64_mask64(sign_bits), negate, triples);
        __m512i codes[3];
        #pragma GCC unroll 3
        for (int i = 0; i < 3; ++i)
          codes[i] = kInPlace ? _mm512_and_si512(triples, in_place_mask[i])
                              : _mm512_and_si512(_mm512_srli_epi16(triples, 2 * i), field);
        #pragma GCC unroll 8
        for (int t = 0; t < kTokens; ++t) {
          const int8_t* qs = qb + t * q_stride + Tl2vTiles::kStepColumns * s;
          #pragma GCC unroll 3
          for (int i = 0; i < 3; ++i)
            acc[t][slot(h, i)] = dot_u8s8_broadcast<kVnni>(acc[t][slot(h, i)], codes[i], qs + 4 * i);
        }
      }
    }
  }

  __m512i sum[kTokens];
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) {
    sum[t] = _mm512_setzero_si512();
    #pragma GCC unroll 6
    for (int a = 0; a < kAcc; ++a)  // in place, accumulator 3h + i holds 4^i times its dot (exact multiple)
      sum[t] = _mm512_add_epi32(sum[t], _mm512_maskz_srai_epi32(0xFFFF, acc[t][a], kInPlace ? 2 * (a % 3) : 0));
  }

  // The tail: I2S lines (i2s_tiles.h), codes at bits 2j of every byte.
  const int8_t* qt = q + blocks * Tl2vTiles::kBlockColumns;
  for (int64_t g = 0; g < tail_lines; ++g, p += Tl2vTiles::kLineBytes, qt += Tl2vTiles::kTailColumns) {
    const __m512i line = _mm512_load_si512(p);
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512i codes = _mm512_and_si512(_mm512_srli_epi16(line, 2 * j), field);
      #pragma GCC unroll 8
      for (int t = 0; t < kTokens; ++t) sum[t] = dot_u8s8<kVnni>(sum[t], codes, broadcast4(qt + t * q_stride + 4 * j));
    }
  }
  #pragma GCC unroll 8
  for (int t = 0; t < kTokens; ++t) _mm512_storeu_si512(out + 16 * t, sum[t]);
}

template <bool kVnni>
void tile_dots_any(const uint8_t* tile, int64_t blocks, int64_t tail_lines, const int8_t* q, int64_t q_stride,
                   int tokens, int32_t* out) {
  switch (tokens) {
    case 1:
      if (blocks <= kMaxBlocksInPlace) return tile_dots<kVnni, 1, true>(tile, blocks, tail_lines, q, q_stride, out);
      return tile_dots<kVnni, 1, false>(tile, blocks, tail_lines, q, q_stride, out);
    case 2: return tile_dots<kVnni, 2, false>(tile, blocks, tail_lines, q, q_stride, out);
    case 3: return tile_dots<kVnni, 3, false>(tile, blocks, tail_lines, q, q_stride, out);
    case 4: return tile_dots<kVnni, 4, false>(tile, blocks, tail_lines, q, q_stride, out);
    case 5: return tile_dots<kVnni, 5, false>(tile, blocks, tail_lines, q, q_stride, out);
    case 6: return tile_dots<kVnni, 6, false>(tile, blocks, tail_lines, q, q_stride, out);
    case 7: return tile_dots<kVnni, 7, false>(tile, blocks, tail_lines, q, q_stride, out);
    default: return tile_dots<kVnni, 8, false>(tile, blocks, tail_lines, q, q_stride, out);
  }
}

}  // namespace

Tl2vTileDots tl2v_tile_dots_avx512(bool vnni) { return vnni ? tile_dots_any<true> : tile_dots_any<false>; }

}  // namespace lowbit
