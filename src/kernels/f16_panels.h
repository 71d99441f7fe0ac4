// F16 matrices repacked into row panels for AVX-512 (Intel's: float_matmul.cpp
// takes_f16_panels): the rows of a panel in the vector lanes, the tokens
// broadcast.
//
// Layout: panel p holds rows [48 p, 48 p + 48) as k steps of 48 values, row
// 48 p + i's value c at [p][c][i] (96 bytes a step, rows past the matrix 0).
// One step is three vectors of 16 rows: converted to float once, each
// multiplies the broadcast x[t][c] of up to 8 tokens (24 accumulators).
//
// Why: the file's layout (rows of k values) puts k in the lanes, so each dot
// ends in a horizontal sum, and for many tokens the rows were converted into
// L1 a chunk at a time and broadcast there (simd_float_panel_body.h): one
// load per FMA, 16 rows read as 16 streams 5 KB apart. 8 sequences decoding
// together read the 2B-4T F16 head at ~55% of the read bandwidth with 2
// threads. Here a panel is one stream in memory order, the conversion stays
// in registers, and 8 broadcasts feed 24 FMAs (docs/kernels.md "F16 row
// panels", docs/performance.md "Session 33").
//
// Every (row, token) is one FMA chain over k in order from 0, whatever the
// token count: bitwise a scalar std::fma loop, and the same bits for a token
// alone or in a batch. (With AMX-BF16, 12 tokens and more go through tiles
// instead, f16_amx_gemm.h: within float rounding of the chain.)
#pragma once

#include <cstdint>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"

namespace lowbit {

inline constexpr int kF16PanelRows = 48;
inline constexpr int kF16PanelTokens = 8;  // tokens per pass over a panel

// w (F16, rows of w.cols values) in panels, repacked on the pool.
AlignedBuffer<uint16_t> pack_f16_panels(const WeightView& w, ThreadPool& pool);

// y[t * y_stride + r] = sum over c < k of row r's value c times
// x[t * x_stride + c], for r < rows (<= kF16PanelRows) and t < tokens (any
// count: passes of kF16PanelTokens over the panel, the later ones from L2).
// Needs AVX-512 (F, BW, VL, DQ).
void f16_panel_gemm_avx512(const uint16_t* panel, int64_t k, const float* x, int64_t x_stride, int64_t tokens, float* y,
                           int64_t y_stride, int rows);

// Up to kF16PairTokens tokens over two panels side by side (two streams in
// memory, as one token reads the file's layout on Intel): what a
// f16_panel_gemm_avx512 call per panel gives.
inline constexpr int kF16PairTokens = 4;
void f16_panel_pair_avx512(const uint16_t* a, const uint16_t* b, int64_t k, const float* x, int64_t x_stride,
                           int tokens, float* ya, float* yb, int64_t y_stride, int rows_a, int rows_b);

}  // namespace lowbit
