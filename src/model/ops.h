// The non-matmul operations of the forward pass, on one token's vector.
// Scalar and plain on purpose: these are the definitions. The decoder runs
// the vectorized table of kernels/vector_ops.h, tested against these, and
// falls back to scalar_vector_ops() on CPUs without AVX2.
#pragma once

#include <cstdint>

#include "kernels/vector_ops.h"
#include "model/model_config.h"

namespace lowbit {

// out = x / sqrt(mean(x^2) + eps) * weight. out may alias x.
void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out);

// The rotation of RoPE pair i (< n_rot / 2) at position pos: angle
// pos * theta^(-2i/n_rot), computed in float as llama2.c and ggml do.
// cos, sin: [n_rot / 2].
void rope_angles(int64_t pos, float theta, int64_t n_rot, float* cos, float* sin);

// Rotates the first n_rot dims of each of n_heads heads (head_dim apart) of x
// in place by the angles of rope_angles: pairs (2i, 2i+1) when interleaved,
// else (i, i + n_rot/2).
void rope_rotate(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin,
                 bool interleaved);

// In place, numerically stable (max subtracted).
void softmax(float* x, int64_t n);

// log(sum of exp(x[i])), n >= 1: max + log(sum of exp(x[i] - max)), each
// exp in float (std::exp of a float, as llama.cpp's expf), the sum in double.
double log_sum_exp(const float* x, int64_t n);

// gate[i] = act(gate[i]) * up[i]: SiLU or squared ReLU.
void silu_gate(float* gate, const float* up, int64_t n);
void relu2_gate(float* gate, const float* up, int64_t n);

// `heads` query heads (q + h * head_dim) over n_pos cached positions of the KV
// head they share (row j of k and v at j * stride; attend_f16's k in slabs,
// position j's at key_slab_offset(k_skip + j, d, stride) of k): per head,
// softmax(q_h . k_j * scale) weighted sum of the v_j into out + h * head_dim.
// scores: [heads][n_pos] scratch. part: as VectorOps::attend_f16's.
void attend_f16(const float* q, int64_t heads, const uint16_t* k, int64_t k_skip, const uint16_t* v, int64_t stride,
                int64_t n_pos, int64_t head_dim, float scale, float* scores, float* out, float* part = nullptr);
void attend_f32(const float* q, int64_t heads, const float* k, const float* v, int64_t stride, int64_t n_pos,
                int64_t head_dim, float scale, float* scores, float* out, float* part = nullptr);

// The attention of `heads` heads over a range of positions from n_parts parts
// of it (attend_f16/f32 with `part`, each part started from (-inf, 0)): part
// p's unnormalized outputs at outs + p * out_stride ([heads][head_dim]) and its
// (max, sum) pairs at parts + p * part_stride ([heads][2]) combine into out
// ([heads][head_dim]), each part's share scaled by exp(its max - the overall max).
void merge_attention_parts(const float* outs, int64_t out_stride, const float* parts, int64_t part_stride,
                           int64_t n_parts, int64_t heads, int64_t head_dim, float* out);

// These definitions as a VectorOps table ("scalar").
const VectorOps& scalar_vector_ops();

// vector_ops() where the CPU has one, else scalar_vector_ops().
const VectorOps& best_vector_ops();

}  // namespace lowbit
