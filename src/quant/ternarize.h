// BitNet b1.58's weight quantization ("absmean"), as in the published training
// code (weight_quant):
//   gamma = max(mean(|w|), 1e-5)
//   t     = clamp(round(w * (1 / gamma)), -1, 1)   round half to even, like torch.round
//   w    ~= gamma * t
// The mean is accumulated in double and rounded to float; 1 / gamma and the
// product w * (1 / gamma) are float, as in torch on float32 weights.
#pragma once

#include <cstdint>

namespace lowbit {

// Writes t[0, n) in {-1, 0, +1} and returns gamma (the scale s with w ~= s * t).
float ternarize_absmean(const float* w, int64_t n, int8_t* t);

}  // namespace lowbit
