// The inner loops of the "f16" kernel family (float_matmul.h), one per ISA
// (x86_avx2/, x86_avx512/, arm_neon/), called only after run-time CPU detection.
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
// xsum: the sums of x over each sub-block of the type that reads them (token
// t's at xsum + t * x_stride / sub-block): 32 features for Q4_K and Q5_K
// (simd_k_quant_body.h) and for Q4_1 and Q5_1 (simd_q4_1_body.h), 16
// for Q2_K (simd_q2_k_body.h); nullptr for the other types.
// float_xsum_group names the size.
using FloatTileDots = void (*)(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride,
                               const float* xsum, int tokens, int64_t k, float* y, int64_t y_stride);
// Features per xsum entry for a type's tiles; 0: they read none.
inline int64_t float_xsum_group(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q4_1: case GgmlType::Q5_1: return 32;
    case GgmlType::Q2_K: return 16;
    default: return 0;
  }
}

// How one to four tokens' rows of F16 / BF16 / F32 are read: none: row after
// row, the hardware prefetcher alone; otherwise several rows at once from
// distant parts of the call's rows, each prefetched ahead in software, either
// non-temporally (AMD: faster on Zen 5; on an Intel Xeon 2.5x slower) or into
// L2 (prefetcht1: Intel, where it took the 2B-4T F16 head from ~80% to 91-94%
// of the read bandwidth). simd_float_gemv_body.h; docs/performance.md
// "Session 8", "Session 11", "Session 24".
enum class FloatPrefetch { None, NonTemporal, ToL2 };

// The hint for this CPU's vendor.
inline FloatPrefetch float_prefetch_for(bool vendor_amd) {
  return vendor_amd ? FloatPrefetch::NonTemporal : FloatPrefetch::ToL2;
}

// nullptr for a type the family does not read.
FloatTileDots float_tile_dots_avx512(GgmlType type, FloatPrefetch prefetch);
FloatTileDots float_tile_dots_avx2(GgmlType type, FloatPrefetch prefetch);

// One row of `blocks` blocks into floats, exactly as the type's
// dequantize_row gives them (F32, F16, BF16: blocks of one value; the
// k-quants, Q4_1, Q5_0, Q5_1): many tokens take a panel of rows in floats.
using FloatRowDequantize = void (*)(const uint8_t* row, int64_t blocks, float* out);

// Many tokens: `rows` <= kFloatPanelRows rows of the tile's type (row r at
// w + r * row_bytes, k values), read through `dequantize` (blocks of
// block_size values, block_bytes each), times `tokens` <= kFloatPanelTokens
// inputs packed with the tokens in the lanes: vector v of lanes / g tokens
// (g = FloatPanelKernel::k_group) as ceil(k / g) steps of `lanes` floats, 0
// past the last token and past k,
//   xt[(v * ceil(k / g) + i / g) * lanes + j * g + i % g] = x[v * lanes / g + j][i],
//   y[t * y_stride + r] = sum_k w[r][k] * x[t][k]
// as g FMA chains over k in order per (row, token), from 0, added at the end
// (simd_float_panel_body.h). next_rows rows follow the panel's in memory, the
// next panel the caller takes: they are prefetched.
// Rows, tokens and values of k a panel takes at a time (a chunk: every block
// size the family reads divides it).
inline constexpr int kFloatPanelRows = 16;
inline constexpr int kFloatPanelTokens = 64;
inline constexpr int64_t kFloatPanelChunk = 256;
using FloatPanelGemm = void (*)(const uint8_t* w, int64_t row_bytes, int rows, FloatRowDequantize dequantize,
                                int64_t block_size, int64_t block_bytes, const float* xt, int tokens, int64_t k,
                                float* y, int64_t y_stride, int next_rows);
// An ISA's panel GEMM and the packing it reads: floats per vector, and values
// of k per token in a vector (1: a lane per token; 2: lane pairs).
struct FloatPanelKernel {
  FloatPanelGemm gemm;
  int lanes;
  int k_group;
};
FloatPanelKernel float_panel_gemm_avx512();
FloatPanelKernel float_panel_gemm_avx2();
FloatPanelKernel float_panel_gemm_neon();
FloatRowDequantize float_row_dequantize_avx512(GgmlType type);
FloatRowDequantize float_row_dequantize_avx2(GgmlType type);
FloatTileDots float_tile_dots_neon(GgmlType type, FloatPrefetch prefetch);
FloatRowDequantize float_row_dequantize_neon(GgmlType type);

}  // namespace lowbit
