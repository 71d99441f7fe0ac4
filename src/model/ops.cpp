#include "model/ops.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#include "core/half.h"

namespace lowbit {

void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) out[i] = weight[i] * (x[i] * scale);
}

void rope_angles(int64_t pos, float theta, int64_t n_rot, float* cos, float* sin) {
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const float freq = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(n_rot));
    const float angle = static_cast<float>(pos) * freq;
    cos[i] = std::cos(angle);
    sin[i] = std::sin(angle);
  }
}

void rope_rotate(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin,
                 bool interleaved) {
  const int64_t half = n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t a = interleaved ? 2 * i : i;
      const int64_t b = interleaved ? 2 * i + 1 : i + half;
      const float v0 = v[a], v1 = v[b];
      v[a] = v0 * cos[i] - v1 * sin[i];
      v[b] = v0 * sin[i] + v1 * cos[i];
    }
  }
}

namespace {

// x[i] = exp(x[i] - max) in place with max the largest of `floor` and the
// x[i]; returns {max, sum of the new x} ({floor, 0} when n = 0): softmax
// before its normalization.
std::pair<float, double> exp_shifted(float* x, int64_t n, float floor = -INFINITY) {
  float max = floor;
  for (int64_t i = 0; i < n; ++i) max = std::fmax(max, x[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  return {max, sum};
}

}  // namespace

void softmax(float* x, int64_t n) {
  const float inv = static_cast<float>(1.0 / exp_shifted(x, n).second);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void silu_gate(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void relu2_gate(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float r = gate[i] > 0 ? gate[i] : 0.0f;
    gate[i] = r * r * up[i];
  }
}

namespace {

inline float to_float(float v) { return v; }
inline float to_float(uint16_t h) { return fp16_to_float(h); }

// key(j, d): element d of position j's k.
template <class T, class Key>
void attend(const float* q, Key key, const T* v, int64_t stride, int64_t n_pos, int64_t head_dim, float scale,
            float* scores, float* out, float* part) {
  for (int64_t j = 0; j < n_pos; ++j) {
    float dot = 0;
    for (int64_t d = 0; d < head_dim; ++d) dot += q[d] * to_float(key(j, d));
    scores[j] = dot * scale;
  }
  if (part == nullptr) {
    softmax(scores, n_pos);
    std::fill(out, out + head_dim, 0.0f);
  } else {  // exp(s - max) unnormalized, added to what out holds (part's max and sum)
    const auto [max, sum] = exp_shifted(scores, n_pos, part[0]);
    if (part[0] == -INFINITY) {
      std::fill(out, out + head_dim, 0.0f);
    } else {
      const float alpha = std::exp(part[0] - max);
      for (int64_t d = 0; d < head_dim; ++d) out[d] *= alpha;
      part[1] *= alpha;
    }
    part[0] = max;
    part[1] += static_cast<float>(sum);
  }
  for (int64_t j = 0; j < n_pos; ++j)
    for (int64_t d = 0; d < head_dim; ++d) out[d] += scores[j] * to_float(v[j * stride + d]);
}

// Row by row, two passes over the positions (the max, then the weights), so
// no scratch: the scalar table is the fallback, not the fast path.
template <class T>
void attend_block(const AttendBlock& b, const T* k, const T* v, float* /*scratch*/) {
  const int64_t Dh = b.head_dim;
  const auto row = [&](const T* base, int64_t j) {
    return base + j / b.kv_block_rows * b.kv_block_stride + j % b.kv_block_rows * b.kv_stride;
  };
  const auto key = [&](int64_t j, int64_t d) {  // f16: slabs from each block's start; f32: rows
    if constexpr (std::is_same_v<T, uint16_t>)
      return k[j / b.kv_block_rows * b.kv_block_stride + key_slab_offset(j % b.kv_block_rows, d, b.kv_stride)];
    return row(k, j)[d];
  };
  const auto score = [&](const float* q, int64_t j) {
    float dot = 0;
    for (int64_t d = 0; d < Dh; ++d) dot += q[d] * to_float(key(j, d));
    return dot * b.scale;
  };
  for (int64_t i = 0; i < b.tokens; ++i) {
    for (int64_t h = 0; h < b.heads; ++h) {
      const float* q = b.q + i * b.q_stride + h * Dh;
      float* out = b.out + i * b.out_stride + h * Dh;
      float max = -INFINITY;
      for (int64_t j = 0; j <= b.positions[i]; ++j) max = std::fmax(max, score(q, j));
      double sum = 0;
      std::fill(out, out + Dh, 0.0f);
      for (int64_t j = 0; j <= b.positions[i]; ++j) {
        const float p = std::exp(score(q, j) - max);
        sum += p;
        for (int64_t d = 0; d < Dh; ++d) out[d] += p * to_float(row(v, j)[d]);
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t d = 0; d < Dh; ++d) out[d] *= inv;
    }
  }
}

void add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void scale(float* y, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

void to_f16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = float_to_fp16(x[i]);
}

}  // namespace

void attend_f16(const float* q, int64_t heads, const uint16_t* k, int64_t k_skip, const uint16_t* v, int64_t stride,
                int64_t n_pos, int64_t head_dim, float scale, float* scores, float* out, float* part) {
  const auto key = [&](int64_t j, int64_t d) { return k[key_slab_offset(k_skip + j, d, stride)]; };
  for (int64_t h = 0; h < heads; ++h)
    attend(q + h * head_dim, key, v, stride, n_pos, head_dim, scale, scores + h * n_pos, out + h * head_dim,
           part != nullptr ? part + 2 * h : nullptr);
}

void attend_f32(const float* q, int64_t heads, const float* k, const float* v, int64_t stride, int64_t n_pos,
                int64_t head_dim, float scale, float* scores, float* out, float* part) {
  const auto key = [&](int64_t j, int64_t d) { return k[j * stride + d]; };
  for (int64_t h = 0; h < heads; ++h)
    attend(q + h * head_dim, key, v, stride, n_pos, head_dim, scale, scores + h * n_pos, out + h * head_dim,
           part != nullptr ? part + 2 * h : nullptr);
}

void merge_attention_parts(const float* outs, int64_t out_stride, const float* parts, int64_t part_stride,
                           int64_t n_parts, int64_t heads, int64_t head_dim, float* out) {
  for (int64_t h = 0; h < heads; ++h) {
    float max = -INFINITY;
    for (int64_t p = 0; p < n_parts; ++p) max = std::fmax(max, parts[p * part_stride + 2 * h]);
    double sum = 0;
    for (int64_t p = 0; p < n_parts; ++p)
      sum += std::exp(static_cast<double>(parts[p * part_stride + 2 * h]) - max) * parts[p * part_stride + 2 * h + 1];
    float* o = out + h * head_dim;
    std::fill(o, o + head_dim, 0.0f);
    for (int64_t p = 0; p < n_parts; ++p) {
      // An empty part (max -inf) weighs 0, its output not read; some part holds a position.
      if (parts[p * part_stride + 2 * h] == -INFINITY) continue;
      const float w = static_cast<float>(std::exp(static_cast<double>(parts[p * part_stride + 2 * h]) - max) / sum);
      const float* op = outs + p * out_stride + h * head_dim;
      for (int64_t d = 0; d < head_dim; ++d) o[d] += w * op[d];
    }
  }
}

double log_sum_exp(const float* x, int64_t n) {
  const float max = *std::max_element(x, x + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - max);  // float exp, as expf
  return static_cast<double>(max) + std::log(sum);
}

const VectorOps& scalar_vector_ops() {
  static const VectorOps ops = {"scalar", rms_norm,   rope_rotate, softmax,    silu_gate,
                                relu2_gate, add,      scale,       to_f16,     attend_f16,
                                attend_f32, attend_block<uint16_t>, attend_block<float>,
                                quantize_activations_absmax_ref, activation_group_sums_ref, log_sum_exp};
  return ops;
}

const VectorOps& best_vector_ops() {
  const VectorOps* v = vector_ops();
  return v != nullptr ? *v : scalar_vector_ops();
}

}  // namespace lowbit
