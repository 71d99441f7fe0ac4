// Ternary GEMM by table lookup, for many tokens on AVX2 without VNNI: "the TL
// idea applied to prefill". Four weights make one base-3 index (81 values);
// for each group of 4 columns a table holds, for 16 tokens at once, the 81
// possible sums sum_i t_i x_i (int16, exact). A row then costs one 32-byte
// load-and-add per 4 weights and 16 tokens (64 multiply-adds), where
// vpmaddubsw + vpaddw take two instructions for 32. The tables are built once
// per (16 tokens, 32 columns) and shared by every row of the call, so a call
// should cover hundreds of rows (I2sMatmul gives each thread one range).
//
// The indices are derived from I2sTiles at the start of each call (no second
// copy of the weights is kept) into per-thread scratch that grows on first use.
#pragma once

#include <cstdint>

#include "core/function_ref.h"
#include "kernels/i2s_tiles.h"
#include "kernels/spanned_tiles.h"

namespace lowbit {

inline constexpr int kI2sLutTokens = 16;  // tokens per table (16 int16 lanes of a ymm)

// Receives the exact signed dots of one tile and one block of tokens:
// dots[t][r] = sum_k t(row 16 * tile + r, k) * q[t0 + t][k], t < tokens, r < 16.
using I2sLutSink = FunctionRef<void(int64_t tile, int64_t t0, int tokens, const int32_t* dots /* [16][16] */)>;

// Tiles [tile_begin, tile_end) of `tiles` (K = cols columns, spans of whole
// 16-column lines but the last) times `tokens` rows of q (q_stride apart,
// readable and zero past cols up to a multiple of 64). Plain AVX2.
void i2s_lut_gemm_avx2(const SpannedTiles<I2sTiles>& tiles, int64_t cols, int64_t tile_begin, int64_t tile_end,
                       const int8_t* q, int64_t q_stride, int64_t tokens, I2sLutSink sink);

}  // namespace lowbit
