#include "kernels/arm_neon/simd_neon.h"
#include "kernels/simd_float_gemv_body.h"

namespace lowbit {

FloatTileDots float_tile_dots_neon(GgmlType type, FloatPrefetch prefetch) {
  return simd::float_tile_dots_for<simd::Neon>(type, prefetch);
}

FloatRowDequantize float_row_dequantize_neon(GgmlType type) { return simd::float_row_dequantize_for<simd::Neon>(type); }

}  // namespace lowbit
