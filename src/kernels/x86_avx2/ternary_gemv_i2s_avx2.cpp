// I2_S tiles x int8 activations with 256-bit vectors: a tile's 16 rows are two
// ymm (rows 0-7 from the line's first 32 bytes, rows 8-15 from the second).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/i2s_tile_dots.h"
#include "kernels/x86_avx2/int8_dot_avx2.h"

// The small loops over tokens, line halves and bit pairs must unroll, or their
// arrays of vectors live in memory instead of registers (GCC -O2 does not).

namespace lowbit {

using avx2::broadcast4;
using avx2::dot_u8s8;

namespace {

// As in the AVX-512 file: codes stay in place under a mask, worth 4^j times
// the code, and each accumulator holds one power of 4 (exact final shift).
// One token with VNNI: masks 0x03, 0x0C, 0x30, 0xC0 and no shifts, while
// K < 2^18. More tokens with VNNI: one shift by 4 per line half, masks 0x03
// and 0x0C (x1, x4).
inline constexpr int64_t kMaxGroupsOneToken = (int64_t{1} << 18) / 16;

// One token prefetches each line 4 KiB ahead (the int2 kernels' distance):
// on an AVX2 Zen 3 (no VNNI) the 2B-4T decode matrices ran 0.79-0.91x the
// int2 kernel's GB/s without it and 1.02-1.12x with it, in the same runs
// (bench-gemv --chain, 1 and 2 threads; docs/performance.md "Session 12").
// Adding the pair sums in int16 for 8 groups before widening them (half the
// multiplies) did not move that ratio (1.08 against 1.10); with two tiles side
// by side it does (tile_dots_1_int16, session 15).
inline constexpr int64_t kPrefetchBytes = 4096;

// With VNNI (plain AVX2 takes tile_dots_1_int16 and tile_dots_int16).
void tile_dots_1(const uint8_t* tile, int64_t groups, const int8_t* q, int32_t* out) {
  const __m256i masks[4] = {_mm256_set1_epi8(0x03), _mm256_set1_epi8(0x0C), _mm256_set1_epi8(0x30),
                            _mm256_set1_epi8(static_cast<char>(0xC0))};
  __m256i acc[2][4];  // [rows 0-7 | 8-15][bit pair]
  #pragma GCC unroll 16
  for (auto& half : acc)
    #pragma GCC unroll 16
    for (auto& a : half) a = _mm256_setzero_si256();
  for (int64_t g = 0; g < groups; ++g) {
    _mm_prefetch(reinterpret_cast<const char*>(tile + 64 * g + kPrefetchBytes), _MM_HINT_T0);
    const __m256i lines[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(tile + 64 * g)),
                              _mm256_load_si256(reinterpret_cast<const __m256i*>(tile + 64 * g + 32))};
    #pragma GCC unroll 16
    for (int j = 0; j < 4; ++j) {
      const __m256i act = broadcast4(q + 16 * g + 4 * j);
      #pragma GCC unroll 16
      for (int h = 0; h < 2; ++h) acc[h][j] = dot_u8s8<true>(acc[h][j], _mm256_and_si256(lines[h], masks[j]), act);
    }
  }
  #pragma GCC unroll 16
  for (int h = 0; h < 2; ++h) {
    __m256i sum = _mm256_add_epi32(acc[h][0], _mm256_srai_epi32(acc[h][1], 2));
    sum = _mm256_add_epi32(sum, _mm256_srai_epi32(acc[h][2], 4));
    sum = _mm256_add_epi32(sum, _mm256_srai_epi32(acc[h][3], 6));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * h), sum);
  }
}

// One token without VNNI: vpmaddubsw's pair sums are added in int16 for 8
// groups before one vpmaddwd widens them, so a line takes 8 multiplies
// instead of tile_dots_1's 16 (Zen 3 has two pipes for them). One shift by 4
// per line half puts the codes of bit pairs 0 and 2 at scale 1 (mask 0x03)
// and those of pairs 1 and 3 at scale 4 (mask 0x0C), one int16 accumulator
// each: per group and lane the scale-4 one adds two pair sums of at most
// 2 x 8 x 128 = 2048 in magnitude, so 8 groups reach -32768 at worst and
// never wrap. In L2 it ran 7.9-8.2 bytes per TSC cycle against tile_dots_1's
// 6.1-6.3; from memory, one tile at a time, no faster.
//
// kTiles = 2 reads two tiles side by side (I2sPairDots: tiles half a region
// apart, two weight streams): from memory, one thread, 18.3-18.8 GB/s
// against 13.8-14.9 one tile at a time, in L2 9.2-9.4 bytes per TSC cycle
// against 9.6-9.8 (AMD Zen 3; docs/performance.md "Session 15").
inline constexpr int64_t kInt16GroupsOneToken = 8;

template <int kTiles>
void tile_dots_1_int16(const uint8_t* const* tiles, int64_t groups, const int8_t* q, int32_t* out) {
  const __m256i m0 = _mm256_set1_epi8(0x03), m1 = _mm256_set1_epi8(0x0C), ones = _mm256_set1_epi16(1);
  __m256i wide[kTiles][2][2];  // [tile][rows 0-7 | 8-15][scale 1 | scale 4], int32
  #pragma GCC unroll 16
  for (auto& tile : wide)
    #pragma GCC unroll 16
    for (auto& half : tile) half[0] = half[1] = _mm256_setzero_si256();
  for (int64_t g0 = 0; g0 < groups; g0 += kInt16GroupsOneToken) {
    const int64_t g_end = std::min(groups, g0 + kInt16GroupsOneToken);
    __m256i acc[kTiles][2][2];  // as wide, int16
    #pragma GCC unroll 16
    for (auto& tile : acc)
      #pragma GCC unroll 16
      for (auto& half : tile) half[0] = half[1] = _mm256_setzero_si256();
    for (int64_t g = g0; g < g_end; ++g) {
      #pragma GCC unroll 16
      for (int i = 0; i < kTiles; ++i)
        _mm_prefetch(reinterpret_cast<const char*>(tiles[i] + 64 * g + kPrefetchBytes), _MM_HINT_T0);
      const __m256i act[4] = {broadcast4(q + 16 * g), broadcast4(q + 16 * g + 4), broadcast4(q + 16 * g + 8),
                              broadcast4(q + 16 * g + 12)};
      #pragma GCC unroll 16
      for (int i = 0; i < kTiles; ++i)
        #pragma GCC unroll 16
        for (int h = 0; h < 2; ++h) {
          const __m256i line = _mm256_load_si256(reinterpret_cast<const __m256i*>(tiles[i] + 64 * g + 32 * h));
          const __m256i high = _mm256_srli_epi16(line, 4);
          const __m256i by1 = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_and_si256(line, m0), act[0]),
                                               _mm256_maddubs_epi16(_mm256_and_si256(high, m0), act[2]));
          const __m256i by4 = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_and_si256(line, m1), act[1]),
                                               _mm256_maddubs_epi16(_mm256_and_si256(high, m1), act[3]));
          acc[i][h][0] = _mm256_add_epi16(acc[i][h][0], by1);
          acc[i][h][1] = _mm256_add_epi16(acc[i][h][1], by4);
          // Two tiles fill the registers: pinned, as tile_dots_int16's.
          if constexpr (kTiles > 1) asm("" : "+x"(acc[i][h][0]), "+x"(acc[i][h][1]));
        }
    }
    #pragma GCC unroll 16
    for (int i = 0; i < kTiles; ++i)
      #pragma GCC unroll 16
      for (int h = 0; h < 2; ++h)
        #pragma GCC unroll 16
        for (int s = 0; s < 2; ++s)
          wide[i][h][s] = _mm256_add_epi32(wide[i][h][s], _mm256_madd_epi16(acc[i][h][s], ones));
  }
  #pragma GCC unroll 16
  for (int i = 0; i < kTiles; ++i)
    #pragma GCC unroll 16
    for (int h = 0; h < 2; ++h)  // the scale-4 sum is a multiple of 4: the shift is exact
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16 * i + 8 * h),
                          _mm256_add_epi32(wide[i][h][0], _mm256_srai_epi32(wide[i][h][1], 2)));
}

void pair_dots(const uint8_t* tile_a, const uint8_t* tile_b, int64_t groups, const int8_t* q, int32_t* out) {
  const uint8_t* const tiles[2] = {tile_a, tile_b};
  tile_dots_1_int16<2>(tiles, groups, q, out);
}

// With VNNI: 4 accumulators per token (scales 1 and 4, two row halves).
template <int kTokens>
void tile_dots(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int32_t* out) {
  const __m256i m0 = _mm256_set1_epi8(0x03), m1 = _mm256_set1_epi8(0x0C);
  __m256i acc[kTokens][2][2];  // [token][rows 0-7 | 8-15][scale 1 | scale 4]
  #pragma GCC unroll 16
  for (auto& token_acc : acc)
    #pragma GCC unroll 16
    for (auto& half : token_acc)
      #pragma GCC unroll 16
      for (auto& a : half) a = _mm256_setzero_si256();
  for (int64_t g = 0; g < groups; ++g) {
    #pragma GCC unroll 16
    for (int h = 0; h < 2; ++h) {
      const __m256i line = _mm256_load_si256(reinterpret_cast<const __m256i*>(tile + 64 * g + 32 * h));
      const __m256i high = _mm256_srli_epi16(line, 4);
      const __m256i codes[4] = {_mm256_and_si256(line, m0), _mm256_and_si256(line, m1), _mm256_and_si256(high, m0),
                                _mm256_and_si256(high, m1)};
      #pragma GCC unroll 16
      for (int t = 0; t < kTokens; ++t)
        #pragma GCC unroll 16
        for (int j = 0; j < 4; ++j)
          acc[t][h][j % 2] = dot_u8s8<true>(acc[t][h][j % 2], codes[j], broadcast4(q + t * q_stride + 16 * g + 4 * j));
    }
  }
  #pragma GCC unroll 16
  for (int t = 0; t < kTokens; ++t)
    #pragma GCC unroll 16
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16 * t + 8 * h),
                          _mm256_add_epi32(acc[t][h][0], _mm256_srai_epi32(acc[t][h][1], 2)));
}

// More tokens without VNNI: every code shifted down to 0..2, so one int16
// accumulator per token and row half adds vpmaddubsw's pair sums for
// kInt16Groups groups (per group and lane 4 pair sums of at most 2 x 2 x 128 =
// 512: 16 groups reach -32768 at worst) before one vpmaddwd widens them:
// 2 instructions per product (vpmaddubsw, vpaddw) instead of 3 (and vpmaddwd,
// vpaddd). Both row halves are taken per pass, so each broadcast of 4
// activation bytes feeds two products: 4 tokens x 2 halves = 8 accumulators.
// The empty asm statements pin each accumulator after its add: without them
// GCC reassociates the int16 adds across products and spills (that version
// ran at 40 MACs per TSC cycle, one row half at a time with 8 tokens at
// 41-45, this one at 47-49; AVX2-only Zen 3, 2560x2560 x 128 tokens, tile
// dots alone; docs/performance.md "Session 13"). Lines are prefetched as one
// token's are: 2-4 tokens (a server's sequences decoding together) are near
// memory-bound, and there it took the layers' matmuls from 13.3-14.1 to 11.9-12.0
// ms per token at 2 sequences, pp128 unchanged ("Session 14").
inline constexpr int64_t kInt16Groups = 16;

template <int kTokens>
void tile_dots_int16(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int32_t* out) {
  const __m256i m0 = _mm256_set1_epi8(0x03), ones = _mm256_set1_epi16(1);
  for (int i = 0; i < 2 * kTokens; ++i) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * i), _mm256_setzero_si256());
  for (int64_t g0 = 0; g0 < groups; g0 += kInt16Groups) {
    const int64_t g_end = std::min(groups, g0 + kInt16Groups);
    __m256i acc[kTokens][2];  // [token][rows 0-7 | 8-15], int16
    #pragma GCC unroll 16
    for (auto& token_acc : acc) token_acc[0] = token_acc[1] = _mm256_setzero_si256();
    for (int64_t g = g0; g < g_end; ++g) {
      _mm_prefetch(reinterpret_cast<const char*>(tile + 64 * g + kPrefetchBytes), _MM_HINT_T0);
      const __m256i lines[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(tile + 64 * g)),
                                _mm256_load_si256(reinterpret_cast<const __m256i*>(tile + 64 * g + 32))};
      #pragma GCC unroll 16
      for (int j = 0; j < 4; ++j) {
        __m256i codes[2];
        #pragma GCC unroll 16
        for (int h = 0; h < 2; ++h) codes[h] = _mm256_and_si256(j ? _mm256_srli_epi16(lines[h], 2 * j) : lines[h], m0);
        asm("" : "+x"(codes[0]), "+x"(codes[1]));
        #pragma GCC unroll 16
        for (int t = 0; t < kTokens; ++t) {
          const __m256i act = broadcast4(q + t * q_stride + 16 * g + 4 * j);
          #pragma GCC unroll 16
          for (int h = 0; h < 2; ++h) {
            acc[t][h] = _mm256_add_epi16(acc[t][h], _mm256_maddubs_epi16(codes[h], act));
            asm("" : "+x"(acc[t][h]));
          }
        }
      }
    }
    #pragma GCC unroll 16
    for (int t = 0; t < kTokens; ++t)
      #pragma GCC unroll 16
      for (int h = 0; h < 2; ++h) {
        __m256i* o = reinterpret_cast<__m256i*>(out + 16 * t + 8 * h);
        _mm256_storeu_si256(o, _mm256_add_epi32(_mm256_loadu_si256(o), _mm256_madd_epi16(acc[t][h], ones)));
      }
  }
}

template <bool kVnni>
void tile_dots_any(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int tokens, int32_t* out) {
  if (tokens == 1) {
    if constexpr (kVnni) {
      if (groups <= kMaxGroupsOneToken) return tile_dots_1(tile, groups, q, out);
      return tile_dots<1>(tile, groups, q, q_stride, out);
    } else {
      // int32 sums of at most 4 x 2 x 128 per column: no limit on K that matters
      return tile_dots_1_int16<1>(&tile, groups, q, out);
    }
  }
  // 16 ymm registers: with VNNI, 4 tokens x 4 accumulators is the most that
  // stays in them; without, 4 tokens x 2 int16 accumulators.
  const int done = tokens >= 4 ? 4 : tokens;
  if constexpr (kVnni) {
    if (done == 2) tile_dots<2>(tile, groups, q, q_stride, out);
    if (done == 3) tile_dots<3>(tile, groups, q, q_stride, out);
    if (done == 4) tile_dots<4>(tile, groups, q, q_stride, out);
  } else {
    if (done == 2) tile_dots_int16<2>(tile, groups, q, q_stride, out);
    if (done == 3) tile_dots_int16<3>(tile, groups, q, q_stride, out);
    if (done == 4) tile_dots_int16<4>(tile, groups, q, q_stride, out);
  }
  if (tokens > done) tile_dots_any<kVnni>(tile, groups, q + done * q_stride, q_stride, tokens - done, out + 16 * done);
}

}  // namespace

I2sTileDots i2s_tile_dots_avx2(bool vnni) { return vnni ? tile_dots_any<true> : tile_dots_any<false>; }

I2sPairDots i2s_pair_dots_avx2(bool vnni) { return vnni ? nullptr : pair_dots; }

}  // namespace lowbit
