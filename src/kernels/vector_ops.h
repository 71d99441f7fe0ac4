// The forward pass's non-matmul ops, vectorized: one table of functions per
// ISA level, chosen once from the CPU's features. The scalar definitions they
// must match (within float tolerance; quantize_absmax bit for bit) are
// src/model/ops.cpp, which fills the same table for CPUs without AVX2.
// Nothing here shows intrinsics: ISA code lives in x86_avx2/, x86_avx512/ and arm_neon/.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "quant/activation_quant.h"

namespace lowbit {

// An f16 cache holds k in slabs of kKeySlab positions, each slab d-major: the
// kKeySlab positions' element d side by side, [head_dim][kKeySlab], the slab
// kKeySlab * stride elements long (stride: a row's length in the row layout,
// >= head_dim). A decode step's scores then take one FMA per lanes of
// positions and no horizontal sums: in L2 5.6-5.9 ns a position and KV head
// of the 2B-4T shape against 16.5-17.2 for rows (docs/performance.md,
// "Session 43"). v stays in rows (its weighted sum broadcasts the weights).
// The f32 cache keeps both in rows.
inline constexpr int64_t kKeySlab = 32;
// Element d of position j of a run of slabs that starts at a slab's start.
inline constexpr int64_t key_slab_offset(int64_t j, int64_t d, int64_t stride) {
  return j / kKeySlab * kKeySlab * stride + d * kKeySlab + j % kKeySlab;
}

// A block of query rows for VectorOps::attend_block_*: `tokens` tokens of one
// sequence, `heads` query heads each, sharing one KV head (prefill's queries).
// Row (i, h) has its query at q + i * q_stride + h * head_dim, attends to the
// cached positions 0 .. positions[i], and writes its output to
// out + i * out_stride + h * head_dim. Row j of v (and of k in f32) is at
// (j / kv_block_rows) * kv_block_stride + (j % kv_block_rows) * kv_stride: the
// cache holds positions in blocks (kv_block_rows a multiple of
// kAttendBlockChunk; by default one block); an f16 k is in slabs from each
// block's start (key_slab_offset with kv_stride). tokens * heads <=
// kAttendBlockRows.
struct AttendBlock {
  const float* q;
  int64_t q_stride;
  float* out;
  int64_t out_stride;
  const int64_t* positions;  // [tokens]
  int64_t tokens, heads, head_dim, kv_stride;
  float scale;
  int64_t kv_block_rows = INT64_MAX, kv_block_stride = 0;
};
inline constexpr int64_t kAttendBlockRows = 256;
// Positions attend_block_* takes at a time (its online softmax's step).
inline constexpr int64_t kAttendBlockChunk = 64;
// Floats of scratch attend_block_* needs for heads of head_dim (any table's).
int64_t attend_block_scratch(int64_t head_dim);
// The AMX table's share of that (x86_avx512/block_attention_amx_avx512.cpp).
int64_t attend_block_amx_scratch(int64_t head_dim);

struct VectorOps {
  const char* isa;  // "scalar", "avx2", "avx512", "neon"
  // out = x / sqrt(mean(x^2) + eps) * weight. out may alias x.
  void (*rms_norm)(const float* x, const float* weight, int64_t n, float eps, float* out);
  // Turns pair i of each of n_heads heads (head_dim apart) of x by the angle
  // whose cos / sin are cos[i] / sin[i], i < n_rot / 2. Interleaved pairs are
  // (2i, 2i+1); otherwise (i, i + n_rot/2).
  void (*rope_rotate)(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin,
                      bool interleaved);
  // In place, max subtracted.
  void (*softmax)(float* x, int64_t n);
  // gate[i] = silu(gate[i]) * up[i], resp. max(gate[i], 0)^2 * up[i].
  void (*silu_gate)(float* gate, const float* up, int64_t n);
  void (*relu2_gate)(float* gate, const float* up, int64_t n);
  // y[i] += x[i]; y[i] *= s.
  void (*add)(float* y, const float* x, int64_t n);
  void (*scale)(float* y, int64_t n, float s);
  // y[i] = fp16(x[i]), round to nearest even.
  void (*to_f16)(const float* x, uint16_t* y, int64_t n);
  // `heads` query heads that share one KV head (grouped-query attention), over
  // n_pos cached positions (row j of k / v at j * stride; attend_f16's k in
  // slabs, position j at key_slab_offset(k_skip + j, d, stride) of k, which
  // is a slab's start, k_skip < kKeySlab). For each head h
  // (q_h = q + h * head_dim): scores_h[j] = q_h . k_j * scale, softmax,
  // out_h = sum_j scores_h[j] v_j. scores: [heads][n_pos] scratch; out:
  // [heads][head_dim]. The heads of a group read each k_j and v_j once.
  // part != nullptr: the positions are one piece of a longer range, whose
  // softmax part carries from piece to piece. On entry (part[2h], part[2h + 1])
  // = (m, l) say what out_h already holds: sum over earlier positions i of
  // exp(s_i - m) v_i, with l = sum of exp(s_i - m) ((-inf, 0): nothing, out_h
  // not read). On return out_h and (m, l) cover those and these positions,
  // out_h left unnormalized (divide by l for the attention). Pieces taken this
  // way may go in any order; pieces started apart from (-inf, 0) combine with
  // merge_attention_parts (model/ops.h).
  void (*attend_f16)(const float* q, int64_t heads, const uint16_t* k, int64_t k_skip, const uint16_t* v,
                     int64_t stride, int64_t n_pos, int64_t head_dim, float scale, float* scores, float* out,
                     float* part);
  void (*attend_f32)(const float* q, int64_t heads, const float* k, const float* v, int64_t stride, int64_t n_pos,
                     int64_t head_dim, float scale, float* scores, float* out, float* part);
  // Causal attention of a block of rows (AttendBlock), each row as
  // attend_f16/f32 over its own positions: the whole block reads each cached
  // k_j and v_j once. scratch: attend_block_scratch(head_dim) floats.
  void (*attend_block_f16)(const AttendBlock& b, const uint16_t* k, const uint16_t* v, float* scratch);
  void (*attend_block_f32)(const AttendBlock& b, const float* k, const float* v, float* scratch);
  // BitNet's per-token absmax int8 quantization, exactly
  // quantize_activations_absmax_ref (same q, scale and sum).
  ActivationRowQuant (*quantize_absmax)(const float* x, int64_t n, int8_t* q);
  // out[g] = sum of q[g * group .. (g + 1) * group), g < n / group: the S_g of
  // the up-convert kernels (vnni4_layout.h). group is a multiple of 16 that
  // divides n.
  void (*group_sums_i8)(const int8_t* q, int64_t n, int64_t group, int32_t* out);
  // log(sum of exp(x[i])), n >= 1, with the largest x[i] taken out first:
  // each exp in float, their sum in double (llama.cpp's perplexity sums
  // expf in double). A perplexity run's log-softmax denominators.
  double (*log_sum_exp)(const float* x, int64_t n);
};

// The best table `cpu` can run, or nullptr when it has neither the AVX2 nor the
// NEON level.
const VectorOps* vector_ops(const CpuFeatures& cpu = cpu_features());

// Per ISA, for tests (each needs the matching CPU level).
const VectorOps& vector_ops_avx2();
const VectorOps& vector_ops_avx512();
// The AVX-512 table with attend_block_f16 on AMX-BF16 tiles (needs amx_bf16).
const VectorOps& vector_ops_avx512_amx();
const VectorOps& vector_ops_neon();

}  // namespace lowbit
