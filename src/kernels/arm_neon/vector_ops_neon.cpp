#include "kernels/arm_neon/simd_neon.h"
#include "kernels/simd_ops_body.h"

namespace lowbit {

const VectorOps& vector_ops_neon() {
  static const VectorOps ops = simd::make_vector_ops<simd::Neon>();
  return ops;
}

}  // namespace lowbit
