// Ternary GEMM on Intel AMX (tile registers, int8 tile dot products), for many
// tokens: prefill and large batches of the i2s kernel family.
//
// One tdpbsud multiplies a 16 x 64 tile of signed activations (16 tokens, 64
// columns) by a 16 x 64 tile of unsigned weight codes (16 quads of 4 columns x
// 16 rows, the VNNI4 order I2sTiles already has after a mask and a shift) into
// 16 x 16 int32 sums: 16384 multiply-adds, where one vpdpbusd does 64.
//
// Feeding the tiles bounds it, not the dots (16384 multiply-adds in ~20
// cycles from L1). So each step multiplies 2 token blocks by 2 weight tiles
// (4 dots per 4 loads), and K goes in slices of 512 columns: a slice of two
// weight tiles' codes, unpacked to bytes once per token chunk, stays in L1
// while the chunk's token blocks pass over it; only the activations come from
// L2, laid out by ActivationBatch in tile rows (each A tile 1 KB in sequence;
// loaded from q's rows in place, 16 lines 2.5-7 KB apart, the GEMM ran 25-45%
// slower), and the next slice's codes are prefetched a few lines per step (a
// prefill waited a quarter of its GEMM time for codes from memory). 128
// tokens on one core: 38-43% of the tile peak, against 29-40% before those
// two (docs/performance.md, "Session 29"; 19-21% with one weight tile and 4
// token blocks over the whole K, "Session 26").
#pragma once

#include <cstdint>
#include <vector>

#include "core/function_ref.h"
#include "kernels/i2s_tiles.h"
#include "kernels/spanned_tiles.h"

namespace lowbit {

inline constexpr int kI2sAmxTokens = 16;  // tokens per tile of activations

// Receives the code dots of one tile and one block of tokens:
// dots[t][r] = sum_k code(row 16 * tile + r, k) * q[t0 + t][k], t < tokens,
// r < 16 (codes t + 1: the caller subtracts each token's sum of q).
using I2sAmxSink = FunctionRef<void(int64_t tile, int64_t t0, int tokens, const int32_t* dots /* [16][16] */)>;

// The 64-column blocks the GEMM multiplies, in its order (the order of tile
// rows): the blocks of every span in turn, a span's last one possibly partial.
// fn(column, span, block): the block's first activation column, its span and
// its index within the span.
template <class Fn>
void for_each_i2s_amx_block(const SpannedTiles<I2sTiles>& tiles, Fn&& fn) {
  constexpr int64_t kLinesPerBlock = 64 / I2sTiles::kColumns;
  for (size_t s = 0; s < tiles.spans.size(); ++s)
    for (int64_t b = 0; b < (tiles.spans[s].groups + kLinesPerBlock - 1) / kLinesPerBlock; ++b)
      fn(tiles.starts[s] + 64 * b, static_cast<int64_t>(s), b);
}

// The first activation column of each block (ActivationBatch::build_tile_rows' list).
inline std::vector<int64_t> i2s_amx_block_columns(const SpannedTiles<I2sTiles>& tiles) {
  std::vector<int64_t> cols;
  for_each_i2s_amx_block(tiles, [&](int64_t col, int64_t, int64_t) { cols.push_back(col); });
  return cols;
}

// Tiles [tile_begin, tile_end) of `tiles` (K columns in spans) times `tokens`
// tokens' activations in tile rows (ActivationBatch::tile_rows for
// i2s_amx_block_columns(tiles)). Needs AMX-INT8 with the process's permission
// for tile data (CpuFeatures::amx_int8); each call configures and releases
// the tiles.
void i2s_amx_gemm(const SpannedTiles<I2sTiles>& tiles, int64_t tile_begin, int64_t tile_end, const int8_t* tile_rows,
                  int64_t tokens, I2sAmxSink sink);

// One sink call's floats: y[t * y_stride + r] = float(dots[16 t + r] - sum[t])
// * (scale / act_scale[t]) for t < tokens, r < rows (both <= 16), bitwise
// TernaryMatmul::write_rows for codes. On AVX-512 (any CPU with AMX has it):
// write_rows, compiled for the baseline, took a quarter as long as the GEMM
// itself in a prefill (docs/performance.md, "Session 30").
void i2s_amx_write_rows(const int32_t* dots /* [16][16] */, int tokens, int rows, const int32_t* sum,
                        const float* act_scale, float scale, float* y, int64_t y_stride);

}  // namespace lowbit
