#include "kernels/simd_float_gemv_body.h"
#include "kernels/x86_avx2/simd_avx2.h"

namespace lowbit {

FloatTileDots float_tile_dots_avx2(GgmlType type, FloatPrefetch prefetch) {
  return simd::float_tile_dots_for<simd::Avx2>(type, prefetch);
}

FloatRowDequantize float_row_dequantize_avx2(GgmlType type) { return simd::float_row_dequantize_for<simd::Avx2>(type); }

}  // namespace lowbit
