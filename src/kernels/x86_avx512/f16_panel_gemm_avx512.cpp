// F16 row panels times float tokens on AVX-512 (kernels/f16_panels.h).
#include <immintrin.h>

#include <algorithm>

#include "kernels/f16_panels.h"

// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here reads them.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lowbit {

namespace {

constexpr int kVectors = kF16PanelRows / 16;  // 16-row vectors per step
constexpr int64_t kStepBytes = kF16PanelRows * 2;
// prefetcht0 this far ahead in each panel's stream (past its end, into the
// next panel). With 2 threads the 2B-4T head ran 4 KiB 10-15% slower, 1 KiB
// 2-3%, prefetcht1 at 2 or 4 KiB 1-5%, and no software prefetch 10-20%
// slower at 8 tokens (docs/performance.md "Session 33").
constexpr int64_t kAheadBytes = 2048;

// One step of P panels: each one's three vectors of rows at c, converted,
// times T tokens' x[c] broadcast.
template <int T, int P>
[[gnu::always_inline]] inline void step(const uint16_t* const (&w)[P], const float* const (&xt)[T], int64_t c,
                                        __m512 (&acc)[P][kVectors][T]) {
#pragma GCC unroll 2
  for (int p = 0; p < P; ++p) {
    __m512 wv[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v)
      wv[v] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(w[p] + c * kF16PanelRows + 16 * v)));
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const __m512 b = _mm512_set1_ps(xt[t][c]);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) acc[p][v][t] = _mm512_fmadd_ps(wv[v], b, acc[p][v][t]);
    }
  }
}

// T tokens over P whole panels at once (P streams in memory), the
// accumulators in registers: P x 3 x T of the 32 (P = 2 up to T = 4).
template <int T, int P>
void panels_pass(const uint16_t* const (&w)[P], int64_t k, const float* x, int64_t x_stride, float* const (&y)[P],
                 int64_t y_stride, const int (&rows)[P]) {
  __m512 acc[P][kVectors][T];
#pragma GCC unroll 2
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v)
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) acc[p][v][t] = _mm512_setzero_ps();
  const float* xt[T];
  for (int t = 0; t < T; ++t) xt[t] = x + t * x_stride;
  int64_t c = 0;
  // Two steps are three lines of a panel (64-byte aligned): a prefetch each.
  for (; c + 2 <= k; c += 2) {
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
      const char* line = reinterpret_cast<const char*>(w[p]) + kAheadBytes + c * kStepBytes;
      _mm_prefetch(line, _MM_HINT_T0);
      _mm_prefetch(line + 64, _MM_HINT_T0);
      _mm_prefetch(line + 128, _MM_HINT_T0);
    }
    step<T, P>(w, xt, c, acc);
    step<T, P>(w, xt, c + 1, acc);
  }
  if (c < k) step<T, P>(w, xt, c, acc);
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < kVectors; ++v) {
      const int n = std::clamp(rows[p] - 16 * v, 0, 16);
      if (n == 0) break;
      const auto mask = static_cast<__mmask16>((1u << n) - 1);
      for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y[p] + t * y_stride + 16 * v, mask, acc[p][v][t]);
    }
}

template <int P>
using Pass = void (*)(const uint16_t* const (&)[P], int64_t, const float*, int64_t, float* const (&)[P], int64_t,
                      const int (&)[P]);
constexpr Pass<1> kOnePanel[kF16PanelTokens] = {panels_pass<1, 1>, panels_pass<2, 1>, panels_pass<3, 1>,
                                                panels_pass<4, 1>, panels_pass<5, 1>, panels_pass<6, 1>,
                                                panels_pass<7, 1>, panels_pass<8, 1>};
constexpr Pass<2> kTwoPanels[kF16PairTokens] = {panels_pass<1, 2>, panels_pass<2, 2>, panels_pass<3, 2>,
                                                panels_pass<4, 2>};

}  // namespace

void f16_panel_gemm_avx512(const uint16_t* panel, int64_t k, const float* x, int64_t x_stride, int64_t tokens, float* y,
                           int64_t y_stride, int rows) {
  for (int64_t t0 = 0; t0 < tokens; t0 += kF16PanelTokens) {
    const auto n = static_cast<int>(std::min<int64_t>(kF16PanelTokens, tokens - t0));
    kOnePanel[n - 1]({panel}, k, x + t0 * x_stride, x_stride, {y + t0 * y_stride}, y_stride, {rows});
  }
}

void f16_panel_pair_avx512(const uint16_t* a, const uint16_t* b, int64_t k, const float* x, int64_t x_stride,
                           int tokens, float* ya, float* yb, int64_t y_stride, int rows_a, int rows_b) {
  kTwoPanels[tokens - 1]({a, b}, k, x, x_stride, {ya, yb}, y_stride, {rows_a, rows_b});
}

}  // namespace lowbit
