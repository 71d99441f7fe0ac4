// The I2_S tile dots on 64-bit Arm: the VNNI4-interleaved lines of I2sTiles
// suit sdot as they suit vpdpbusd. A 64-byte line is 4 vectors of 4 rows;
// each 32-bit lane holds one row's codes for 4 columns in each of its 4 bit
// planes, and `sdot` with a lane operand multiplies such a lane by the 4
// activation bytes of that plane (lane j of the line's 16 activations).
#include <arm_neon.h>

#include "kernels/i2s_tile_dots.h"
#include "kernels/i2s_tiles.h"

namespace lowbit {

namespace {

// Tokens per pass: 4 accumulators per token, the line's 4 vectors, one plane's
// 4 code vectors and the tokens' activations fit the 32 registers for 4.
constexpr int kPassTokens = 4;

// Bit plane j of the line (codes 0..2, so signed bytes hold them), dotted with
// activation lane j of every token.
template <int j, int kTokens>
inline void add_plane(const uint8x16_t (&line)[4], const int8x16_t (&x)[kTokens], int32x4_t (&acc)[kTokens][4]) {
  const uint8x16_t three = vdupq_n_u8(3);
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    uint8x16_t c;
    if constexpr (j == 0)
      c = vandq_u8(line[m], three);
    else if constexpr (j == 3)
      c = vshrq_n_u8(line[m], 6);
    else
      c = vandq_u8(vshrq_n_u8(line[m], 2 * j), three);
    const int8x16_t codes = vreinterpretq_s8_u8(c);
#pragma GCC unroll 4
    for (int t = 0; t < kTokens; ++t) acc[t][m] = vdotq_laneq_s32(acc[t][m], codes, x[t], j);
  }
}

template <int kTokens>
void tile_pass(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int32_t* out) {
  int32x4_t acc[kTokens][4];
  for (int t = 0; t < kTokens; ++t)
    for (int m = 0; m < 4; ++m) acc[t][m] = vdupq_n_s32(0);
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* p = tile + g * I2sTiles::kLineBytes;
    const uint8x16_t line[4] = {vld1q_u8(p), vld1q_u8(p + 16), vld1q_u8(p + 32), vld1q_u8(p + 48)};
    int8x16_t x[kTokens];
    for (int t = 0; t < kTokens; ++t) x[t] = vld1q_s8(q + t * q_stride + g * I2sTiles::kColumns);
    add_plane<0>(line, x, acc);
    add_plane<1>(line, x, acc);
    add_plane<2>(line, x, acc);
    add_plane<3>(line, x, acc);
  }
  for (int t = 0; t < kTokens; ++t)
    for (int m = 0; m < 4; ++m) vst1q_s32(out + t * I2sTiles::kRows + 4 * m, acc[t][m]);
}

void tile_dots(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int tokens, int32_t* out) {
  for (int t0 = 0; t0 < tokens; t0 += kPassTokens) {
    const int8_t* qt = q + t0 * q_stride;
    int32_t* o = out + t0 * I2sTiles::kRows;
    switch (tokens - t0) {
      case 1: tile_pass<1>(tile, groups, qt, q_stride, o); break;
      case 2: tile_pass<2>(tile, groups, qt, q_stride, o); break;
      case 3: tile_pass<3>(tile, groups, qt, q_stride, o); break;
      default: tile_pass<4>(tile, groups, qt, q_stride, o); break;
    }
  }
}

}  // namespace

I2sTileDots i2s_tile_dots_neon() { return tile_dots; }

}  // namespace lowbit
