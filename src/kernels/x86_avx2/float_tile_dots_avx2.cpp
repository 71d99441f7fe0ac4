#include "kernels/simd_float_gemv_body.h"
#include "kernels/simd_float_panel_body.h"
#include "kernels/x86_avx2/simd_avx2.h"

namespace lowbit {

FloatTileDots float_tile_dots_avx2(GgmlType type, FloatPrefetch prefetch) {
  return simd::float_tile_dots_for<simd::Avx2>(type, prefetch);
}

FloatRowDequantize float_row_dequantize_avx2(GgmlType type) { return simd::float_row_dequantize_for<simd::Avx2>(type); }

// Register groups of 12 rows x 8 tokens (12 accumulators, a token vector and a
// broadcast) or 6 rows x 16 tokens (12, two and one) in the 16 ymm registers.
FloatPanelKernel float_panel_gemm_avx2() {
  constexpr int kGroup = 1;
  return {simd::float_panel_gemm<simd::Avx2, 12, 6, kGroup>, simd::Avx2::kLanes, kGroup};
}

}  // namespace lowbit
