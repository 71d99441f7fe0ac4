// The broadcast-and-FMA step two kernels share, over a lane type S: prefill's
// block attention (simd_block_attention_body.h: query rows in the lanes) and
// the float GEMM for many tokens (simd_float_panel_body.h: tokens in the
// lanes). One value of y, broadcast, multiplies kV vectors of x, so every FMA
// is kLanes useful products and no sum ends in a horizontal add.
#pragma once

#include <algorithm>
#include <cstdint>

namespace lowbit::simd {

// acc[n][v] += sum_i x[i * R + v * x_v + lanes] * y[n * y_n + i * y_i]
// over i < count, each (n, v) one FMA chain in order of i: kN broadcasts of y
// per i, each feeding the kV vectors of x at i.
//
// kG = 2 broadcasts a pair of y values, y[n * y_n + i * y_i] and the one
// after it, into alternate lanes (S::set1_pair): x then holds kLanes / 2
// columns, each as two lanes that take the pair's two values, so every lane
// is still one FMA chain and none is empty when there are only half as many
// columns as lanes (the float panels' 8 tokens with AVX-512).
//
// pf_per > 0: step i also prefetches lines [i * pf_per, (i + 1) * pf_per) of
// the pf_lines lines at pf into L2 (the float panels' next rows, spread over
// the FMAs: a burst of prefetches waits on full fill buffers).
template <class S, int kN, int kV, int kG = 1>
[[gnu::always_inline]] inline void panel_products(const float* x, int64_t R, int64_t x_v, int64_t count, const float* y,
                                                  int64_t y_n, int64_t y_i, typename S::V (&acc)[kN][kV],
                                                  const char* pf = nullptr, int64_t pf_lines = 0, int64_t pf_per = 0) {
  static_assert(kG == 1 || kG == 2);
  using V = typename S::V;
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t l = i * pf_per; l < std::min(pf_lines, (i + 1) * pf_per); ++l) __builtin_prefetch(pf + l * 64, 0, 2);
    V xv[kV];
    #pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) xv[v] = S::load(x + i * R + v * x_v);
    #pragma GCC unroll 32
    for (int n = 0; n < kN; ++n) {
      V bn;
      if constexpr (kG == 1) {
        bn = S::set1(y[n * y_n + i * y_i]);
      } else {
        bn = S::set1_pair(y + n * y_n + i * y_i);
      }
      #pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) acc[n][v] = S::fmadd(xv[v], bn, acc[n][v]);
    }
  }
}

}  // namespace lowbit::simd
