#include "kernels/simd_float_gemv_body.h"
#include "kernels/x86_avx512/simd_avx512.h"

namespace lowbit {

FloatTileDots float_tile_dots_avx512(GgmlType type, FloatPrefetch prefetch) {
  return simd::float_tile_dots_for<simd::Avx512>(type, prefetch);
}

FloatRowDequantize float_row_dequantize_avx512(GgmlType type) { return simd::float_row_dequantize_for<simd::Avx512>(type); }

}  // namespace lowbit
