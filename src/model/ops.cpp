#include "model/ops.h"

#include <cmath>

namespace lowbit {

void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) out[i] = weight[i] * (x[i] * scale);
}

void rope(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos, float theta, RopeStyle style) {
  const int64_t half = n_rot / 2;
  for (int64_t i = 0; i < half; ++i) {
    // As llama2.c and ggml do it: the frequency and angle in float.
    const float freq = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(n_rot));
    const float angle = static_cast<float>(pos) * freq;
    const float c = std::cos(angle), s = std::sin(angle);
    for (int64_t h = 0; h < n_heads; ++h) {
      float* v = x + h * head_dim;
      const int64_t a = style == RopeStyle::Interleaved ? 2 * i : i;
      const int64_t b = style == RopeStyle::Interleaved ? 2 * i + 1 : i + half;
      const float v0 = v[a], v1 = v[b];
      v[a] = v0 * c - v1 * s;
      v[b] = v0 * s + v1 * c;
    }
  }
}

void softmax(float* x, int64_t n) {
  float max = x[0];
  for (int64_t i = 1; i < n; ++i) max = std::fmax(max, x[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void gated_activation(float* gate, const float* up, int64_t n, FfnActivation act) {
  if (act == FfnActivation::Silu) {
    for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float r = gate[i] > 0 ? gate[i] : 0.0f;
      gate[i] = r * r * up[i];
    }
  }
}

}  // namespace lowbit
