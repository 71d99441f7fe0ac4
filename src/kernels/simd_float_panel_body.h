// The body of FloatPanelGemm (float_tile_dots.h), written once over a lane
// type S: a panel of weight rows times many tokens.
//
// The 4-row tiles of simd_float_gemv_body.h put k in the lanes: each dot ends
// in a horizontal sum, each weight vector is converted once per 4 tokens, and
// 4 tokens' activations (40 KB at k = 2560) do not stay in L1 beside the
// rows. With an F16 head, 8 or 16 sequences decoding together spent half
// their time there at ~40% of the FMA peak, a perplexity run two thirds at
// ~25%. Here:
//   - the tokens are in the lanes (the caller packs x so), and a weight value
//     is broadcast (simd_broadcast_products.h, as prefill attention does):
//     one vector load and kN broadcast FMAs per value of k, kN rows'
//     accumulators in registers;
//   - k goes in chunks of kChunk values: the panel's rows are converted (or
//     dequantized) a chunk at a time into an L1 buffer, once for all the
//     call's tokens, and a token vector's chunk (16 KB with 16 lanes) stays
//     in L1 while every row group passes over it;
//   - the accumulators wait in memory between chunks, so every (row, token)
//     is one FMA chain over k in order, from 0: the same bits for a token
//     whatever else is in the batch, and the same as a scalar std::fma loop.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/float_tile_dots.h"
#include "kernels/simd_broadcast_products.h"

namespace lowbit::simd {

namespace float_panel {

// Values of k per chunk: a panel's chunk (16 rows, 16 KB) and a token
// vector's (16 KB with 16 lanes) fit L1 together.
inline constexpr int64_t kChunk = kFloatPanelChunk;

// acc[v .. v + kV - 1][r0 .. r0 + kR - 1] (in memory, kFloatPanelRows per
// token vector) += those rows of the chunk (wc: kChunk floats apart) times
// those token vectors' chunks (xc_stride apart), over n values.
template <class S, int kR, int kV>
void row_group(const float* wc, const float* xc, int64_t xc_stride, int v, int64_t n, bool first,
               typename S::V* acc, int r0) {
  using V = typename S::V;
  V a[kR][kV];
  #pragma GCC unroll 32
  for (int r = 0; r < kR; ++r)
    #pragma GCC unroll 4
    for (int j = 0; j < kV; ++j) a[r][j] = first ? S::zero() : acc[(v + j) * kFloatPanelRows + r0 + r];
  panel_products<S, kR, kV>(xc + v * xc_stride, S::kLanes, xc_stride, n, wc + r0 * kChunk, kChunk, 1, a);
  #pragma GCC unroll 32
  for (int r = 0; r < kR; ++r)
    #pragma GCC unroll 4
    for (int j = 0; j < kV; ++j) acc[(v + j) * kFloatPanelRows + r0 + r] = a[r][j];
}

}  // namespace float_panel

// FloatPanelGemm with register groups of kN rows x one token vector or kN2
// rows x two (what the ISA's registers hold), then groups of 4 and 1 rows for
// the rest.
template <class S, int kN, int kN2>
void float_panel_gemm(const uint8_t* w, int64_t row_bytes, int rows, FloatRowDequantize dequantize,
                      int64_t block_size, int64_t block_bytes, const float* xt, int tokens, int64_t k, float* y,
                      int64_t y_stride, int next_rows) {
  using namespace float_panel;
  using V = typename S::V;
  constexpr int L = S::kLanes;
  static_assert(kFloatPanelTokens % L == 0 && kChunk % L == 0);
  alignas(64) float wc[kFloatPanelRows * kChunk];                // the panel's chunk in floats
  alignas(64) V acc[kFloatPanelTokens / L * kFloatPanelRows];    // [token vector][row]
  const int vectors = (tokens + L - 1) / L;
  for (int64_t c0 = 0; c0 < k; c0 += kChunk) {
    const int64_t n = std::min(kChunk, k - c0);
    // Without the prefetch below the conversion waited on memory; one chunk
    // ahead took a 16-token F16 call from 58 to 63-65 G multiply-adds per
    // second on one thread (Intel Xeon); 2, 4 and 8 ahead ran alike end to end.
    const int64_t chunk_bytes = kChunk / block_size * block_bytes;
    // Each row's next chunk into L2 as this one is converted, ahead of the
    // hardware prefetcher; in the last chunk, the next panel's first
    // (inline: GCC 12 drops a helper that only prefetches).
    const bool last = c0 + kChunk >= k;
    for (int r = 0; r < std::max(rows, last ? next_rows : 0); ++r) {
      const uint8_t* raw = w + r * row_bytes + c0 / block_size * block_bytes;
      const uint8_t* ahead = last ? w + (rows + r) * row_bytes : raw + chunk_bytes;
      if (!last || r < next_rows)
        for (int64_t b = 0; b < chunk_bytes; b += 64) __builtin_prefetch(ahead + b, 0, 2);
      if (r < rows) dequantize(raw, n / block_size, wc + r * kChunk);
    }
    const float* xc = xt + c0 * L;
    const bool first = c0 == 0;
    int v = 0;
    // Two token vectors per step where there are (each broadcast feeds two
    // FMAs: half the loads per FMA), kN2 rows a group; then one, kN rows.
    for (; v + 2 <= vectors; v += 2) {
      int r = 0;
      for (; r + kN2 <= rows; r += kN2) row_group<S, kN2, 2>(wc, xc, k * L, v, n, first, acc, r);
      for (; r + 4 <= rows; r += 4) row_group<S, 4, 2>(wc, xc, k * L, v, n, first, acc, r);
      for (; r < rows; ++r) row_group<S, 1, 2>(wc, xc, k * L, v, n, first, acc, r);
    }
    for (; v < vectors; ++v) {
      int r = 0;
      for (; r + kN <= rows; r += kN) row_group<S, kN, 1>(wc, xc, k * L, v, n, first, acc, r);
      for (; r + 4 <= rows; r += 4) row_group<S, 4, 1>(wc, xc, k * L, v, n, first, acc, r);
      for (; r < rows; ++r) row_group<S, 1, 1>(wc, xc, k * L, v, n, first, acc, r);
    }
  }
  alignas(64) float lanes[L];
  for (int v = 0; v < vectors; ++v)
    for (int r = 0; r < rows; ++r) {
      S::store(lanes, acc[v * kFloatPanelRows + r]);
      for (int t = 0; t < std::min(L, tokens - v * L); ++t) y[(v * L + t) * y_stride + r] = lanes[t];
    }
}

}  // namespace lowbit::simd
