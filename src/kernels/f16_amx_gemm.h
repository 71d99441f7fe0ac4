// F16 row panels (f16_panels.h) times many float tokens on Intel AMX-BF16
// tiles (tdpbf16ps: 16 x 16 x 32 multiply-adds per instruction, where an
// AVX-512 FMA does 16), from 12 tokens: a server's batch of sequences or a
// perplexity run's 512 positions through the 2B-4T head, a float model's
// prefill.
//
// BF16 keeps 8 significant bits, so each operand goes in as bf16 pieces cut
// from the top of its bits, as the prefill attention does
// (x86_avx512/block_attention_amx_avx512.cpp): an F16 weight (11 bits) as hi +
// lo, a float activation (24 bits) as p1 + p2 + p3; a product takes five of
// the six piece products, leaving out p3 lo (below 2^-21 of it). Piece
// products are exact in float and the tile unit adds in float, so y is a
// float dot product summed in another order than the FMA chain of the
// panels' AVX-512 path: equal within float rounding, not bit for bit. (The
// unit flushes float denormals: products below ~1e-38 count as 0. An
// infinite weight's lo piece is inf - inf: NaN, where the chain gives inf.)
//
// Tiles: C [16 tokens][16 rows] float (one token block x a panel's three
// row groups of 16), stored into y's rows; A the tokens' pieces, [16 tokens]
// [32 values of k], laid out once per chunk of tokens (lay_f16_amx_tokens)
// whose pieces stay in L2; B a row group's pieces, [16 pairs of k][16 rows x
// 2], converted from the panel step by step as the first token block
// multiplies (the vector units convert while the tile unit multiplies), the
// panel's lines prefetched 2 KiB ahead. The converted steps go to a ring of
// four that stays in L1: the token blocks take turns over spans of four
// steps, each keeping its C tiles in memory between turns, so a panel is
// converted once whatever the token count. 10 tile loads feed 15 products.
//
// One thread, the F16 matrix of bench/float_tokens_bench.cpp (16384 x 2560):
// 145-158 G multiply-adds per second from 64 tokens on, against the panels'
// 78-87 (docs/performance.md "Session 35"); 89-104 G at 16 tokens, against
// the panels' 65-73 (Session 36).
#pragma once

#include <cstdint>

namespace lowbit {

inline constexpr int kF16AmxTokens = 16;  // tokens per A tile

// bf16 values the laid-out pieces of `tokens` tokens take for k columns:
// [ceil(tokens / 16) blocks][3 pieces][ceil(k / 32) steps][16 tokens][32].
int64_t f16_amx_laid_tokens_size(int64_t tokens, int64_t k);

// Block b (16 tokens from 16 b; tokens past `tokens` and columns past k are 0)
// of x's pieces into out at its place in the layout above.
void lay_f16_amx_tokens(const float* x, int64_t x_stride, int64_t tokens, int64_t k, int64_t b, uint16_t* out);

// y[t * y_stride + r] for the rows r < `rows` of panels [p0, p1) and the
// `tokens` tokens laid out in `laid`. Needs AMX-BF16 and the process's
// permission for tile data (CpuFeatures::amx_bf16); each call configures and
// releases the tiles.
void f16_amx_gemm(const uint16_t* panels, int64_t rows, int64_t k, int64_t p0, int64_t p1, const uint16_t* laid,
                  int64_t tokens, float* y, int64_t y_stride);

}  // namespace lowbit
