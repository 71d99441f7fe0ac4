#include "kernels/simd_ops_body.h"
#include "kernels/x86_avx512/simd_avx512.h"

namespace lowbit {

const VectorOps& vector_ops_avx512() {
  static const VectorOps ops = simd::make_vector_ops<simd::Avx512>();
  return ops;
}

}  // namespace lowbit
