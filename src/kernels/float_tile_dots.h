// The inner loops of the "f16" kernel family (float_matmul.h), one per ISA
// (x86_avx2/, x86_avx512/), called only after run-time CPU detection.
#pragma once

#include <cstdint>

#include "core/ggml_types.h"

namespace lowbit {

// Rows and tokens per call: a 4 x 4 block of dots keeps 16 accumulators in
// registers and reads each weight vector once for all its tokens.
inline constexpr int kFloatTileRows = 4;
inline constexpr int kFloatTileTokens = 4;

// For `rows` weight rows (row r at w + r * row_bytes, k values of the tile's
// type: F32, F16, BF16 or Q6_K) and tokens <= kFloatTileTokens inputs (token t
// at x + t * x_stride, k floats). A GEMV or a few tokens take a whole chunk of
// rows per call; many tokens go tile by tile (kFloatTileRows rows), so the
// tile stays in L1 while every block of tokens passes over it:
//   y[t * y_stride + r] = sum_k W[r][k] * x[t][k], accumulated in float.
using FloatTileDots = void (*)(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride,
                               int tokens, int64_t k, float* y, int64_t y_stride);

// nullptr for a type the family does not read. prefetch: one-token rows of
// F16 / BF16 / F32 are read four at a time from distant parts of the call's
// rows and prefetched non-temporally ahead (simd_float_gemv_body.h; faster on
// AMD Zen 5, the prefetch slower on an Intel Xeon: docs/performance.md
// "Session 8", "Session 11").
FloatTileDots float_tile_dots_avx512(GgmlType type, bool prefetch);
FloatTileDots float_tile_dots_avx2(GgmlType type, bool prefetch);

}  // namespace lowbit
