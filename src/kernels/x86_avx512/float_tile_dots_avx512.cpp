#include "kernels/simd_float_gemv_body.h"
#include "kernels/simd_float_panel_body.h"
#include "kernels/x86_avx512/simd_avx512.h"

namespace lowbit {

FloatTileDots float_tile_dots_avx512(GgmlType type, FloatPrefetch prefetch) {
  return simd::float_tile_dots_for<simd::Avx512>(type, prefetch);
}

FloatRowDequantize float_row_dequantize_avx512(GgmlType type) { return simd::float_row_dequantize_for<simd::Avx512>(type); }

// Register groups of 16 rows x 16 tokens (16 accumulators and a token vector;
// the broadcasts are FMA operands) or 12 rows x 32 tokens (24 accumulators,
// two token vectors and a broadcast) in the 32 zmm registers.
FloatPanelGemm float_panel_gemm_avx512() { return simd::float_panel_gemm<simd::Avx512, 16, 12, 2>; }

}  // namespace lowbit
