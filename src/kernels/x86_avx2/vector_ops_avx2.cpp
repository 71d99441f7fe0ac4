#include "kernels/simd_ops_body.h"
#include "kernels/x86_avx2/simd_avx2.h"

namespace lowbit {

const VectorOps& vector_ops_avx2() {
  static const VectorOps ops = simd::make_vector_ops<simd::Avx2>();
  return ops;
}

}  // namespace lowbit
