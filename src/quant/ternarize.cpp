#include "quant/ternarize.h"

#include <algorithm>
#include <cmath>

namespace lowbit {

float ternarize_absmean(const float* w, int64_t n, int8_t* t) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::fabs(static_cast<double>(w[i]));
  const float mean = n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.0f;
  const float gamma = std::max(mean, 1e-5f);
  const float inv = 1.0f / gamma;
  for (int64_t i = 0; i < n; ++i) {
    const float r = std::nearbyint(w[i] * inv);  // default rounding mode: half to even
    t[i] = static_cast<int8_t>(std::clamp(r, -1.0f, 1.0f));
  }
  return gamma;
}

}  // namespace lowbit
