// BitNet b1.58's activation quantization (design.md rule 2, formats.md I2_S):
// per token, s = 127 / max(max|x|, 1e-5); q = round(x * s) clamped to [-128, 127].
// Every integer matmul in lowbit feeds on this; x is recovered as q / s.
#pragma once

#include <cstdint>

namespace lowbit {

struct ActivationRowQuant {
  float scale;  // s: q ~= x * s
  int32_t sum;  // sum of q, for kernels that store weights with an offset (code = t + 1)
};

// Scalar reference: quantizes one token's n values.
ActivationRowQuant quantize_activations_absmax_ref(const float* x, int64_t n, int8_t* q);

// Scalar reference: out[g] = sum of q over group g of `group` values, g < n / group
// (the per-group activation sums of formats with a weight offset per group).
void activation_group_sums_ref(const int8_t* q, int64_t n, int64_t group, int32_t* out);

}  // namespace lowbit
