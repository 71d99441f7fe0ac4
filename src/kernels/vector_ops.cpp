#include "kernels/vector_ops.h"

namespace lowbit {

const VectorOps* vector_ops(const CpuFeatures& cpu) {
  if (cpu.has_avx512_level()) return &vector_ops_avx512();
  if (cpu.has_avx2_level()) return &vector_ops_avx2();
  return nullptr;
}

}  // namespace lowbit
