// I2_S tiles x int8 activations with 256-bit vectors: a tile's 16 rows are two
// ymm (rows 0-7 from the line's first 32 bytes, rows 8-15 from the second).
#include <immintrin.h>

#include <cstring>

#include "kernels/i2s_tile_dots.h"
#include "kernels/x86_avx2/int8_dot_avx2.h"

// The small loops over tokens, accumulators and bit pairs must unroll, or their
// arrays of vectors live in memory instead of registers (GCC -O2 does not).

namespace lowbit {

using avx2::broadcast4;
using avx2::dot_u8s8;

namespace {

template <bool kVnni, int kTokens>
void tile_dots(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int32_t* out) {
  const __m256i mask = _mm256_set1_epi8(3);
  __m256i acc[kTokens][2][2];  // [token][rows 0-7 | 8-15][column quad parity]
  #pragma GCC unroll 16
  for (auto& token_acc : acc)
    #pragma GCC unroll 16
    for (auto& half : token_acc)
      #pragma GCC unroll 16
      for (auto& a : half) a = _mm256_setzero_si256();
  for (int64_t g = 0; g < groups; ++g) {
    const __m256i lines[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(tile + 64 * g)),
                              _mm256_load_si256(reinterpret_cast<const __m256i*>(tile + 64 * g + 32))};
    #pragma GCC unroll 16
    for (int j = 0; j < 4; ++j) {
      const __m256i codes[2] = {_mm256_and_si256(_mm256_srli_epi16(lines[0], 2 * j), mask),
                                _mm256_and_si256(_mm256_srli_epi16(lines[1], 2 * j), mask)};
      #pragma GCC unroll 16
      for (int t = 0; t < kTokens; ++t) {
        const __m256i act = broadcast4(q + t * q_stride + 16 * g + 4 * j);
        #pragma GCC unroll 16
        for (int h = 0; h < 2; ++h) acc[t][h][j % 2] = dot_u8s8<kVnni>(acc[t][h][j % 2], codes[h], act);
      }
    }
  }
  #pragma GCC unroll 16
  for (int t = 0; t < kTokens; ++t)
    #pragma GCC unroll 16
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16 * t + 8 * h),
                          _mm256_add_epi32(acc[t][h][0], acc[t][h][1]));
}

template <bool kVnni>
void tile_dots_any(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int tokens, int32_t* out) {
  // 16 ymm registers: 4 tokens x 4 accumulators is the most that stays in them.
  switch (tokens) {
    case 1: return tile_dots<kVnni, 1>(tile, groups, q, q_stride, out);
    case 2: return tile_dots<kVnni, 2>(tile, groups, q, q_stride, out);
    case 3: return tile_dots<kVnni, 3>(tile, groups, q, q_stride, out);
    default:
      tile_dots<kVnni, 4>(tile, groups, q, q_stride, out);
      if (tokens > 4) tile_dots_any<kVnni>(tile, groups, q + 4 * q_stride, q_stride, tokens - 4, out + 64);
  }
}

}  // namespace

I2sTileDots i2s_tile_dots_avx2(bool vnni) { return vnni ? tile_dots_any<true> : tile_dots_any<false>; }

}  // namespace lowbit
