#include "kernels/vector_ops.h"

namespace lowbit {

const VectorOps* vector_ops(const CpuFeatures& cpu) {
#if LOWBIT_X86_KERNELS
  if (cpu.has_avx512_level()) return &vector_ops_avx512();
  if (cpu.has_avx2_level()) return &vector_ops_avx2();
#endif
#if LOWBIT_NEON_KERNELS
  if (cpu.has_neon_level()) return &vector_ops_neon();
#endif
  return nullptr;
}

}  // namespace lowbit
