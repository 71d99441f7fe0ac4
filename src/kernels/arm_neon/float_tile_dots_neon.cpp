#include "kernels/arm_neon/simd_neon.h"
#include "kernels/simd_float_gemv_body.h"
#include "kernels/simd_float_panel_body.h"

namespace lowbit {

FloatTileDots float_tile_dots_neon(GgmlType type, FloatPrefetch prefetch) {
  return simd::float_tile_dots_for<simd::Neon>(type, prefetch);
}

FloatRowDequantize float_row_dequantize_neon(GgmlType type) { return simd::float_row_dequantize_for<simd::Neon>(type); }

// NEON's 8-lane vectors are register pairs: groups of 8 rows x 8 tokens or
// 4 rows x 16 keep 16 registers of accumulators and up to 6 of tokens and
// broadcast (not measured on Arm hardware).
FloatPanelKernel float_panel_gemm_neon() {
  constexpr int kGroup = 1;
  return {simd::float_panel_gemm<simd::Neon, 8, 4, kGroup>, simd::Neon::kLanes, kGroup};
}

}  // namespace lowbit
