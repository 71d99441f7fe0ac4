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
//     accumulators in registers. With AVX-512 (kG = 2) a vector holds 8
//     tokens, each in a lane pair that takes an even and an odd value of k
//     from one 64-bit broadcast: 8 tokens fill the 16 lanes (with a token
//     per lane, half stayed empty and the tiles won there);
//   - k goes in chunks of kChunk values: the panel's rows are converted (or
//     dequantized) a chunk at a time into an L1 buffer, once for all the
//     call's tokens, and a token vector's chunk (16 KB with 16 lanes) stays
//     in L1 while every row group passes over it;
//   - the accumulators wait in memory between chunks, so every lane is one
//     FMA chain over its values of k in order, from 0, and a (row, token)
//     the sum of its kG lanes at the end: the same bits for a token whatever
//     else is in the batch, and the same as a scalar std::fma model
//     (float_panel_order, float_matmul.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "kernels/float_tile_dots.h"
#include "kernels/simd_broadcast_products.h"

namespace lowbit::simd {

namespace float_panel {

// Values of k per chunk: a panel's chunk (16 rows, 16 KB) and a token
// vector's (16 KB with 16 lanes) fit L1 together.
inline constexpr int64_t kChunk = kFloatPanelChunk;

// One chunk of a panel, as its row groups read it: the rows' chunk in
// floats (kChunk apart), the token vectors' chunks (xc_stride apart), steps
// of kG values of k, the accumulators (in memory, kFloatPanelRows per token
// vector; not read in the first chunk), and lines still to prefetch.
template <class S>
struct Chunk {
  const float* wc;
  const float* xc;
  int64_t xc_stride, steps;
  bool first;
  typename S::V* acc;
  const char* pf;
  int64_t pf_lines;
};

// acc[v .. v + kV - 1][r0 .. r0 + kR - 1] += those rows of the chunk times
// those token vectors' chunks, prefetching the chunk's lines on the way
// (panel_products) if no group before this one has.
template <class S, int kR, int kV, int kG>
void row_group(Chunk<S>& c, int v, int r0) {
  using V = typename S::V;
  V a[kR][kV];
  #pragma GCC unroll 32
  for (int r = 0; r < kR; ++r)
    #pragma GCC unroll 4
    for (int j = 0; j < kV; ++j) a[r][j] = c.first ? S::zero() : c.acc[(v + j) * kFloatPanelRows + r0 + r];
  const int64_t lines = std::exchange(c.pf_lines, 0);
  panel_products<S, kR, kV, kG>(c.xc + v * c.xc_stride, S::kLanes, c.xc_stride, c.steps, c.wc + r0 * kChunk, kChunk, kG,
                                a, c.pf, lines, (lines + c.steps - 1) / c.steps);
  #pragma GCC unroll 32
  for (int r = 0; r < kR; ++r)
    #pragma GCC unroll 4
    for (int j = 0; j < kV; ++j) c.acc[(v + j) * kFloatPanelRows + r0 + r] = a[r][j];
}

}  // namespace float_panel

// FloatPanelGemm with register groups of kN rows x one token vector or kN2
// rows x two (what the ISA's registers hold), then groups of 4 and 1 rows for
// the rest. kG: values of k per lane group (float_panel_order, float_matmul.h): 1, each
// lane a token; 2, lane pairs (2t, 2t + 1) token t's even and odd k.
template <class S, int kN, int kN2, int kG>
void float_panel_gemm(const uint8_t* w, int64_t row_bytes, int rows, FloatRowDequantize dequantize,
                      int64_t block_size, int64_t block_bytes, const float* xt, int tokens, int64_t k, float* y,
                      int64_t y_stride, int next_rows) {
  using namespace float_panel;
  using V = typename S::V;
  constexpr int L = S::kLanes, T = L / kG;  // lanes, tokens per vector
  static_assert(kFloatPanelTokens % T == 0 && kChunk % (L * kG) == 0);
  alignas(64) float wc[kFloatPanelRows * kChunk];                // the panel's chunk in floats
  alignas(64) V acc[kFloatPanelTokens / T * kFloatPanelRows];    // [token vector][row]
  const int vectors = (tokens + T - 1) / T;
  const int64_t xt_stride = (k + kG - 1) / kG * L;  // floats per packed token vector
  for (int64_t c0 = 0; c0 < k; c0 += kChunk) {
    const int64_t n = std::min(kChunk, k - c0), steps = (n + kG - 1) / kG;
    // The next panel (next_rows rows after this one's, in the caller's
    // order) into L2 as this one is computed: its lines in memory order, a
    // share per chunk, spread over the chunk's first row group. Prefetching
    // each row's next chunk as this one was converted (128 lines at once
    // with F16) stalled on full fill buffers: 8 sequences decoding together
    // read the F16 head at ~50% of the read bandwidth, and this took them
    // +6%, 16 sequences +6% (2 threads, Intel Xeon; docs/performance.md
    // "Session 32"). (Inline: GCC 12 drops a helper that only prefetches.)
    const int64_t chunks = (k + kChunk - 1) / kChunk, ci = c0 / kChunk;
    const int64_t next_lines = (next_rows * row_bytes + 63) / 64;
    const int64_t pf_begin = ci * next_lines / chunks;
    for (int r = 0; r < rows; ++r) {
      dequantize(w + r * row_bytes + c0 / block_size * block_bytes, n / block_size, wc + r * kChunk);
      // An odd k's last pair: 0 times the 0 packed past x's end.
      if (n % kG != 0) wc[r * kChunk + n] = 0.0f;
    }
    Chunk<S> c{wc,
               xt + c0 / kG * L,
               xt_stride,
               steps,
               c0 == 0,
               acc,
               reinterpret_cast<const char*>(w + rows * row_bytes) + pf_begin * 64,
               (ci + 1) * next_lines / chunks - pf_begin};
    int v = 0;
    // Two token vectors per step where there are (each broadcast feeds two
    // FMAs: half the loads per FMA), kN2 rows a group; then one, kN rows.
    for (; v + 2 <= vectors; v += 2) {
      int r = 0;
      for (; r + kN2 <= rows; r += kN2) row_group<S, kN2, 2, kG>(c, v, r);
      for (; r + 4 <= rows; r += 4) row_group<S, 4, 2, kG>(c, v, r);
      for (; r < rows; ++r) row_group<S, 1, 2, kG>(c, v, r);
    }
    for (; v < vectors; ++v) {
      int r = 0;
      for (; r + kN <= rows; r += kN) row_group<S, kN, 1, kG>(c, v, r);
      for (; r + 4 <= rows; r += 4) row_group<S, 4, 1, kG>(c, v, r);
      for (; r < rows; ++r) row_group<S, 1, 1, kG>(c, v, r);
    }
  }
  // A token's lanes summed: its even-k chain plus its odd-k one (kG = 2).
  alignas(64) float lanes[L];
  for (int v = 0; v < vectors; ++v)
    for (int r = 0; r < rows; ++r) {
      S::store(lanes, acc[v * kFloatPanelRows + r]);
      for (int t = 0; t < std::min(T, tokens - v * T); ++t) {
        float sum = lanes[t * kG];
        for (int g = 1; g < kG; ++g) sum += lanes[t * kG + g];
        y[(v * T + t) * y_stride + r] = sum;
      }
    }
}

}  // namespace lowbit::simd
