#include "kernels/vector_ops.h"

#include <algorithm>

namespace lowbit {

// Q^T and out^T [head_dim][rows], scores [chunk][<= rows], max and sum [rows],
// and a chunk of k and v rows in f32 [chunk][head_dim] (simd_block_attention_body.h).
int64_t attend_block_scratch(int64_t head_dim) {
  constexpr int64_t R = kAttendBlockRows, C = kAttendBlockChunk;
  const int64_t simd = 2 * R * head_dim + C * R + 2 * R + 2 * C * head_dim;
#if LOWBIT_X86_KERNELS
  return std::max(simd, attend_block_amx_scratch(head_dim));
#else
  return simd;
#endif
}

const VectorOps* vector_ops(const CpuFeatures& cpu) {
#if LOWBIT_X86_KERNELS
  if (cpu.has_avx512_level()) return cpu.amx_bf16 ? &vector_ops_avx512_amx() : &vector_ops_avx512();
  if (cpu.has_avx2_level()) return &vector_ops_avx2();
#endif
#if LOWBIT_NEON_KERNELS
  if (cpu.has_neon_level()) return &vector_ops_neon();
#endif
  return nullptr;
}

}  // namespace lowbit
