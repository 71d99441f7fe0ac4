// The non-matmul operations of the forward pass, on one token's vector.
// Scalar and plain on purpose: these are the definitions; the token loop's
// time goes to the matmuls.
#pragma once

#include <cstdint>

#include "model/model_config.h"

namespace lowbit {

// out = x / sqrt(mean(x^2) + eps) * weight. out may alias x.
void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out);

// Rotates the first n_rot dims of each of n_heads heads (head_dim apart) of x
// in place for position pos: pair i turns by pos * theta^(-2i/n_rot).
void rope(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos, float theta, RopeStyle style);

// In place, numerically stable (max subtracted).
void softmax(float* x, int64_t n);

// gate[i] = act(gate[i]) * up[i]: SiLU or squared ReLU.
void gated_activation(float* gate, const float* up, int64_t n, FfnActivation act);

}  // namespace lowbit
