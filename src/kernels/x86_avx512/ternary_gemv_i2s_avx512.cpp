// I2_S tiles x int8 activations with 512-bit vectors: one zmm = the 16 rows of
// a tile, each 32-bit lane dotting 4 codes with 4 broadcast activation bytes.
#include <immintrin.h>

#include <cstring>

#include "kernels/i2s_tile_dots.h"
#include "kernels/x86_avx512/int8_dot_avx512.h"

// The small loops over tokens and bit pairs must unroll, or their
// arrays of vectors live in memory instead of registers (GCC -O2 does not).

namespace lowbit {

using avx512::broadcast4;
using avx512::dot_u8s8;

namespace {

// The codes are never shifted down to 0..2. A byte holds the codes of 4
// columns at bits 0-1, 2-3, 4-5, 6-7; masking keeps one of them in place, worth
// 4^j times the code, and the dot accumulates that multiple exactly (u8 x s8
// into int32 with VNNI; into int16 pairs otherwise, where 128 x -128 x 2 still
// fits). Each accumulator holds a single power of 4, so the final shift right
// is exact. This saves the 3 shifts per line that bound the 1-token loop.
//
// One token: 4 accumulators, masks 0x03, 0x0C, 0x30, 0xC0 (scales 1, 4, 16, 64),
// no shifts at all. |acc| <= 64 x 2 x 128 x K/4 = 2^13 K: int32 holds it for
// K < 2^18 with room to spare; longer rows take the 2-accumulator loop.
// Four chains of a 4-cycle vpdpbusd hold this loop to ~3.8 cycles per line
// (~58 GB/s of codes per core at 3.45 GHz, above a core's share of DRAM here).
// Eight chains (two lines per iteration) took 2.5 cycles per line from L1,
// yet 2B-4T decode ran 3-8% slower with them in 12 alternated runs, as it did
// with a 4 KiB software prefetch added; both were reverted (performance.md).
// More tokens: 2 accumulators each, so one shift by 4 per line (shared by the
// tokens) brings bits 4-7 down; masks 0x03 and 0x0C then give scales 1 and 4.
inline constexpr int64_t kMaxGroupsOneToken = (int64_t{1} << 18) / 16;

// a / 2^n for a multiple of 2^n (the maskz form: GCC 12's plain _mm512_srai_epi32
// trips -Wuninitialized inside its own header).
inline __m512i exact_shift_right(__m512i a, unsigned n) { return _mm512_maskz_srai_epi32(0xFFFF, a, n); }

// Software prefetch (prefetcht0) this far ahead, Intel only. On an Intel Xeon
// (2 cores, 17.6 GB/s per core) the 2B-4T GEMVs read 68-77% of the probe's
// bandwidth without it and 89-94% with it at 2 threads, 90-98% at 1 (1, 2, 4
// and 8 KiB measured: 1 KiB short of the rest, 2-8 KiB alike; performance.md
// "Session 24"). On Zen 5 a 4 KiB prefetch cost decode 3-8% (above). The
// several-token loop prefetches too: 2 and 4 sequences decoding together ran
// 35-42% faster with it at 2 threads (36 -> 49 and 62 -> 89 tok/s), 128-token
// prefill ~10% (264 -> 291).
inline constexpr int64_t kPrefetchBytes = 2048;

// One token over kTiles tiles read side by side (1: a tile alone; 2: the pair
// form, I2sPairDots, where two weight streams far apart keep more loads in
// flight on one core): out[16 u .. 16 u + 15] are tile u's dots.
template <bool kVnni, bool kPrefetch, int kTiles>
void one_token_dots(const uint8_t* const* tile, int64_t groups, const int8_t* q, int32_t* out) {
  const __m512i m[4] = {_mm512_set1_epi8(0x03), _mm512_set1_epi8(0x0C), _mm512_set1_epi8(0x30),
                        _mm512_set1_epi8(static_cast<char>(0xC0))};
  __m512i a[kTiles][4];
  #pragma GCC unroll 2
  for (auto& tile_acc : a)
    #pragma GCC unroll 4
    for (auto& v : tile_acc) v = _mm512_setzero_si512();
  for (int64_t g = 0; g < groups; ++g) {
    const int8_t* qg = q + 16 * g;
    #pragma GCC unroll 2
    for (int u = 0; u < kTiles; ++u) {
      if constexpr (kPrefetch)
        _mm_prefetch(reinterpret_cast<const char*>(tile[u] + 64 * g + kPrefetchBytes), _MM_HINT_T0);
      const __m512i line = _mm512_load_si512(tile[u] + 64 * g);
      #pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) a[u][j] = dot_u8s8<kVnni>(a[u][j], _mm512_and_si512(line, m[j]), broadcast4(qg + 4 * j));
    }
  }
  #pragma GCC unroll 2
  for (int u = 0; u < kTiles; ++u) {
    __m512i sum = _mm512_add_epi32(a[u][0], exact_shift_right(a[u][1], 2));
    sum = _mm512_add_epi32(sum, exact_shift_right(a[u][2], 4));
    sum = _mm512_add_epi32(sum, exact_shift_right(a[u][3], 6));
    _mm512_storeu_si512(out + 16 * u, sum);
  }
}

template <bool kVnni, bool kPrefetch>
void tile_dots_1(const uint8_t* tile, int64_t groups, const int8_t* q, int32_t* out) {
  one_token_dots<kVnni, kPrefetch, 1>(&tile, groups, q, out);
}

template <bool kVnni>
void pair_dots(const uint8_t* tile_a, const uint8_t* tile_b, int64_t groups, const int8_t* q, int32_t* out) {
  const uint8_t* tiles[2] = {tile_a, tile_b};
  one_token_dots<kVnni, true, 2>(tiles, groups, q, out);
}

// kTokens tokens over kTiles tiles read side by side (1: a tile alone; 2:
// two weight streams far apart, as pair_dots reads them for one token: with 4
// tokens one stream per core had read at 62-69% of the bandwidth, its
// prefetch stalling on full fill buffers, 4 and 8 KiB ahead no better):
// out[(u * kTokens + t) * 16 ..] are tile u's dots for token t.
template <bool kVnni, bool kPrefetch, int kTokens, int kTiles>
void tokens_dots(const uint8_t* const* tile, int64_t groups, const int8_t* q, int64_t q_stride, int32_t* out) {
  // Codes 1 and 3 of a byte are taken as masked (4 times the code, one
  // accumulator each: a shift saved per line) while the accumulators fit the
  // registers, and shifted down into one accumulator per tile and token
  // beyond that (two tiles of 5 to 8 tokens).
  constexpr int kAcc = kTiles * kTokens <= 8 ? 2 : 1;
  const __m512i m0 = _mm512_set1_epi8(0x03), m1 = _mm512_set1_epi8(kAcc == 2 ? 0x0C : 0x03);
  __m512i acc[kTiles][kTokens][kAcc];  // [tile][token][scale 1 | scale 4]
  #pragma GCC unroll 2
  for (auto& tile_acc : acc)
    #pragma GCC unroll 16
    for (auto& token_acc : tile_acc)
      for (auto& a : token_acc) a = _mm512_setzero_si512();
  for (int64_t g = 0; g < groups; ++g) {
    __m512i codes[kTiles][4];
    #pragma GCC unroll 2
    for (int u = 0; u < kTiles; ++u) {
      if constexpr (kPrefetch)
        _mm_prefetch(reinterpret_cast<const char*>(tile[u] + 64 * g + kPrefetchBytes), _MM_HINT_T0);
      const __m512i line = _mm512_load_si512(tile[u] + 64 * g);
      const __m512i high = _mm512_srli_epi16(line, 4);
      codes[u][0] = _mm512_and_si512(line, m0);
      codes[u][1] = _mm512_and_si512(kAcc == 2 ? line : _mm512_srli_epi16(line, 2), m1);
      codes[u][2] = _mm512_and_si512(high, m0);
      codes[u][3] = _mm512_and_si512(kAcc == 2 ? high : _mm512_srli_epi16(line, 6), m1);
    }
    #pragma GCC unroll 16
    for (int t = 0; t < kTokens; ++t) {
      const int8_t* qt = q + t * q_stride + 16 * g;
      #pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m512i b = broadcast4(qt + 4 * j);
        #pragma GCC unroll 2
        for (int u = 0; u < kTiles; ++u) acc[u][t][j % kAcc] = dot_u8s8<kVnni>(acc[u][t][j % kAcc], codes[u][j], b);
      }
    }
  }
  #pragma GCC unroll 2
  for (int u = 0; u < kTiles; ++u)
    #pragma GCC unroll 16
    for (int t = 0; t < kTokens; ++t)
      _mm512_storeu_si512(out + (u * kTokens + t) * 16,
                          kAcc == 2 ? _mm512_add_epi32(acc[u][t][0], exact_shift_right(acc[u][t][kAcc - 1], 2))
                                    : acc[u][t][0]);
}

template <bool kVnni, bool kPrefetch, int kTokens>
void tile_dots(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int32_t* out) {
  tokens_dots<kVnni, kPrefetch, kTokens, 1>(&tile, groups, q, q_stride, out);
}

template <bool kVnni, int kTokens>
void pair_tokens_dots(const uint8_t* tile_a, const uint8_t* tile_b, int64_t groups, const int8_t* q, int64_t q_stride,
                      int32_t* out) {
  const uint8_t* tiles[2] = {tile_a, tile_b};
  tokens_dots<kVnni, true, kTokens, 2>(tiles, groups, q, q_stride, out);
}

template <bool kVnni>
void pair_tokens_any(const uint8_t* tile_a, const uint8_t* tile_b, int64_t groups, const int8_t* q, int64_t q_stride,
                     int tokens, int32_t* out) {
  switch (tokens) {
    case 2: return pair_tokens_dots<kVnni, 2>(tile_a, tile_b, groups, q, q_stride, out);
    case 3: return pair_tokens_dots<kVnni, 3>(tile_a, tile_b, groups, q, q_stride, out);
    case 4: return pair_tokens_dots<kVnni, 4>(tile_a, tile_b, groups, q, q_stride, out);
    case 5: return pair_tokens_dots<kVnni, 5>(tile_a, tile_b, groups, q, q_stride, out);
    case 6: return pair_tokens_dots<kVnni, 6>(tile_a, tile_b, groups, q, q_stride, out);
    case 7: return pair_tokens_dots<kVnni, 7>(tile_a, tile_b, groups, q, q_stride, out);
    default: return pair_tokens_dots<kVnni, 8>(tile_a, tile_b, groups, q, q_stride, out);
  }
}

template <bool kVnni, bool kPrefetch>
void tile_dots_any(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int tokens, int32_t* out) {
  switch (tokens) {
    case 1:
      if (groups <= kMaxGroupsOneToken) return tile_dots_1<kVnni, kPrefetch>(tile, groups, q, out);
      return tile_dots<kVnni, kPrefetch, 1>(tile, groups, q, q_stride, out);
    case 2: return tile_dots<kVnni, kPrefetch, 2>(tile, groups, q, q_stride, out);
    case 3: return tile_dots<kVnni, kPrefetch, 3>(tile, groups, q, q_stride, out);
    case 4: return tile_dots<kVnni, kPrefetch, 4>(tile, groups, q, q_stride, out);
    case 5: return tile_dots<kVnni, kPrefetch, 5>(tile, groups, q, q_stride, out);
    case 6: return tile_dots<kVnni, kPrefetch, 6>(tile, groups, q, q_stride, out);
    case 7: return tile_dots<kVnni, kPrefetch, 7>(tile, groups, q, q_stride, out);
    default: return tile_dots<kVnni, kPrefetch, 8>(tile, groups, q, q_stride, out);
  }
}

}  // namespace

I2sPairDots i2s_pair_dots_avx512(bool vnni) { return vnni ? pair_dots<true> : pair_dots<false>; }

I2sPairTokenDots i2s_pair_token_dots_avx512(bool vnni) { return vnni ? pair_tokens_any<true> : pair_tokens_any<false>; }

I2sTileDots i2s_tile_dots_avx512(bool vnni, bool prefetch) {
  if (vnni) return prefetch ? tile_dots_any<true, true> : tile_dots_any<true, false>;
  return prefetch ? tile_dots_any<false, true> : tile_dots_any<false, false>;
}

}  // namespace lowbit
