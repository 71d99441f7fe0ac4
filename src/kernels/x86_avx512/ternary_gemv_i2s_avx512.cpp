// I2_S tiles x int8 activations with 512-bit vectors: one zmm = the 16 rows of
// a tile, each 32-bit lane dotting 4 codes with 4 broadcast activation bytes.
#include <immintrin.h>

#include <cstring>

#include "kernels/i2s_tile_dots.h"
#include "kernels/x86_avx512/int8_dot_avx512.h"

// The small loops over tokens, accumulators and bit pairs must unroll, or their
// arrays of vectors live in memory instead of registers (GCC -O2 does not).

namespace lowbit {

using avx512::broadcast4;
using avx512::dot_u8s8;

namespace {

// kAcc accumulators per token break the dependency chain of the 4 dots per line.
template <bool kVnni, int kTokens, int kAcc>
void tile_dots(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int32_t* out) {
  const __m512i mask = _mm512_set1_epi8(3);
  __m512i acc[kTokens][kAcc];
  #pragma GCC unroll 16
  for (auto& token_acc : acc)
    #pragma GCC unroll 16
    for (auto& a : token_acc) a = _mm512_setzero_si512();
  for (int64_t g = 0; g < groups; ++g) {
    const __m512i line = _mm512_load_si512(tile + 64 * g);
    const __m512i codes[4] = {_mm512_and_si512(line, mask), _mm512_and_si512(_mm512_srli_epi16(line, 2), mask),
                              _mm512_and_si512(_mm512_srli_epi16(line, 4), mask),
                              _mm512_and_si512(_mm512_srli_epi16(line, 6), mask)};
    #pragma GCC unroll 16
    for (int t = 0; t < kTokens; ++t) {
      const int8_t* qt = q + t * q_stride + 16 * g;
      #pragma GCC unroll 16
      for (int j = 0; j < 4; ++j) acc[t][j % kAcc] = dot_u8s8<kVnni>(acc[t][j % kAcc], codes[j], broadcast4(qt + 4 * j));
    }
  }
  #pragma GCC unroll 16
  for (int t = 0; t < kTokens; ++t) {
    __m512i sum = acc[t][0];
    #pragma GCC unroll 16
    for (int a = 1; a < kAcc; ++a) sum = _mm512_add_epi32(sum, acc[t][a]);
    _mm512_storeu_si512(out + 16 * t, sum);
  }
}

template <bool kVnni>
void tile_dots_any(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int tokens, int32_t* out) {
  switch (tokens) {
    case 1: return tile_dots<kVnni, 1, 4>(tile, groups, q, q_stride, out);
    case 2: return tile_dots<kVnni, 2, 2>(tile, groups, q, q_stride, out);
    case 3: return tile_dots<kVnni, 3, 2>(tile, groups, q, q_stride, out);
    case 4: return tile_dots<kVnni, 4, 2>(tile, groups, q, q_stride, out);
    case 5: return tile_dots<kVnni, 5, 2>(tile, groups, q, q_stride, out);
    case 6: return tile_dots<kVnni, 6, 2>(tile, groups, q, q_stride, out);
    case 7: return tile_dots<kVnni, 7, 2>(tile, groups, q, q_stride, out);
    default: return tile_dots<kVnni, 8, 2>(tile, groups, q, q_stride, out);
  }
}

}  // namespace

I2sTileDots i2s_tile_dots_avx512(bool vnni) { return vnni ? tile_dots_any<true> : tile_dots_any<false>; }

}  // namespace lowbit
