#include "kernels/simd_float_gemv_body.h"
#include "kernels/simd_float_panel_body.h"
#include "kernels/x86_avx512/simd_avx512.h"

namespace lowbit {

FloatTileDots float_tile_dots_avx512(GgmlType type, FloatPrefetch prefetch) {
  return simd::float_tile_dots_for<simd::Avx512>(type, prefetch);
}

FloatRowDequantize float_row_dequantize_avx512(GgmlType type) { return simd::float_row_dequantize_for<simd::Avx512>(type); }

// Lane pairs (8 tokens a vector); register groups of 16 rows x 8 tokens (16
// accumulators, a token vector and a broadcast pair) or 12 rows x 16 tokens
// (24 accumulators, two token vectors and a broadcast) in the 32 zmm registers.
FloatPanelKernel float_panel_gemm_avx512() {
  constexpr int kGroup = 2;
  return {simd::float_panel_gemm<simd::Avx512, 16, 12, kGroup>, simd::Avx512::kLanes, kGroup};
}

}  // namespace lowbit
