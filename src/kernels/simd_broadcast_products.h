// The broadcast-and-FMA step two kernels share, over a lane type S: prefill's
// block attention (simd_block_attention_body.h: query rows in the lanes) and
// the float GEMM for many tokens (simd_float_panel_body.h: tokens in the
// lanes). One value of y, broadcast, multiplies kV vectors of x, so every FMA
// is kLanes useful products and no sum ends in a horizontal add.
#pragma once

#include <cstdint>

namespace lowbit::simd {

// acc[n][v] += sum_i x[i * R + v * x_v + lanes] * y[n * y_n + i * y_i]
// over i < count, each (n, v) one FMA chain in order of i: kN broadcasts of y
// per i, each feeding the kV vectors of x at i.
template <class S, int kN, int kV>
[[gnu::always_inline]] inline void panel_products(const float* x, int64_t R, int64_t x_v, int64_t count, const float* y,
                                                  int64_t y_n, int64_t y_i, typename S::V (&acc)[kN][kV]) {
  using V = typename S::V;
  for (int64_t i = 0; i < count; ++i) {
    V xv[kV];
    #pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) xv[v] = S::load(x + i * R + v * x_v);
    #pragma GCC unroll 32
    for (int n = 0; n < kN; ++n) {
      const V bn = S::set1(y[n * y_n + i * y_i]);
      #pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) acc[n][v] = S::fmadd(xv[v], bn, acc[n][v]);
    }
  }
}

}  // namespace lowbit::simd
