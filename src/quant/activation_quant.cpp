#include "quant/activation_quant.h"

#include <cmath>

namespace lowbit {

// Follows bitnet.cpp's quantize_row_i8_s: the max in double, s = 127 / max
// rounded to float, then round-half-away-from-zero of the float product x * s.
// (Training rounds half to even; an exact tie x * s = k + 0.5 is the only case
// where the two differ.)
ActivationRowQuant quantize_activations_absmax_ref(const float* x, int64_t n, int8_t* q) {
  double max = 1e-5;
  for (int64_t i = 0; i < n; ++i) max = std::fmax(max, std::fabs(static_cast<double>(x[i])));
  const float s = static_cast<float>(127.0 / max);
  int32_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    float v = std::round(x[i] * s);
    if (v > 127.0f) v = 127.0f;
    if (v < -128.0f) v = -128.0f;
    q[i] = static_cast<int8_t>(v);
    sum += q[i];
  }
  return {s, sum};
}

void activation_group_sums_ref(const int8_t* q, int64_t n, int64_t group, int32_t* out) {
  for (int64_t g = 0; g < n / group; ++g) {
    int32_t s = 0;
    for (int64_t k = g * group; k < (g + 1) * group; ++k) s += q[k];
    out[g] = s;
  }
}

}  // namespace lowbit
