// The inner loop of the TL2V kernel (ISA code in x86_avx512/), called only
// after run-time CPU detection.
#pragma once

#include <cstdint>

namespace lowbit {

// Up to kTl2vMaxTokens tokens per call: each step's codes are up-converted once
// and dotted with every token's activations.
inline constexpr int kTl2vMaxTokens = 8;
// Up to this many tiles per call (consecutive in memory, tile_stride bytes
// apart): the activations loaded once serve them all.
inline constexpr int kTl2vTilesPerCall = 2;

// For `tiles` (1 or 2) tiles of Tl2vTiles (16 rows each; `blocks` blocks, then
// `tail_lines` I2S lines) and `tokens` tokens, row r of tile u:
//   out[t][16u + r] = sum_k code(r, k) * q[t * q_stride + k]   (codes t + 1 in 0..2)
// int32, exact; the caller subtracts sum(q). out has 32 rows per token; those
// of a missing second tile are 0. q rows must be readable for
// 96 * blocks + 16 * tail_lines bytes.
using Tl2vTileDots = void (*)(const uint8_t* tile, int64_t tile_stride, int tiles, int64_t blocks,
                              int64_t tail_lines, const int8_t* q, int64_t q_stride, int tokens,
                              int32_t* out /* [tokens][32] */);

// One token, two tiles in one pass, tile b at tile_a + b_offset bytes (any
// distance, either sign; another matrix's tile too): out[r] = tile a's row r,
// out[out_b + r] = tile b's (out_b >= 16), as Tl2vTileDots gives them. Two
// weight streams far apart read side by side keep more loads in flight than
// one; out_b lets each tile's rows land where its matrix's output is gathered.
using Tl2vPairDots = void (*)(const uint8_t* tile_a, int64_t b_offset, int64_t blocks, int64_t tail_lines,
                              const int8_t* q, int32_t* out, int64_t out_b);

// 2 to kTl2vMaxTokens tokens over two tiles of the same width side by side,
// tile b at tile_a + b_offset bytes (any distance): out[32 t + r] = tile a's
// row r for token t, out[32 t + out_b + r] = tile b's (out_b >= 16), as
// Tl2vTileDots gives two tiles.
using Tl2vPairTokenDots = void (*)(const uint8_t* tile_a, int64_t b_offset, int64_t blocks, int64_t tail_lines,
                                   const int8_t* q, int64_t q_stride, int tokens, int32_t* out, int64_t out_b);

// AVX-512 with VBMI (vpermb); vnni: vpdpbusd, otherwise vpmaddubsw + vpmaddwd.
// nta_prefetch: the weights' software prefetch is prefetchnta (AMD), else prefetcht0.
Tl2vTileDots tl2v_tile_dots_avx512(bool vnni, bool nta_prefetch);
Tl2vPairDots tl2v_pair_dots_avx512(bool vnni, bool nta_prefetch);
Tl2vPairTokenDots tl2v_pair_token_dots_avx512(bool vnni, bool nta_prefetch);

}  // namespace lowbit
