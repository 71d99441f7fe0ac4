#include "core/error.h"
#include "kernels/matmul.h"
#include "kernels/vector_ops.h"
#include "quant/activation_quant.h"

namespace lowbit {

ActivationBatch::ActivationBatch(int64_t max_tokens, int64_t max_k)
    : max_tokens_(max_tokens),
      max_k_(max_k),
      q_(static_cast<size_t>(max_tokens * ((max_k + 63) / 64 * 64))),
      scale_(static_cast<size_t>(max_tokens)),
      sum_(static_cast<size_t>(max_tokens)) {}

void ActivationBatch::set(const float* x, int64_t tokens, int64_t k) {
  if (tokens > max_tokens_ || k > max_k_)
    fail("activation batch of ", tokens, " x ", k, " exceeds its capacity ", max_tokens_, " x ", max_k_);
  x_ = x;
  tokens_ = tokens;
  k_ = k;
  quantized_ = false;
}

void ActivationBatch::quantize(ThreadPool& pool) const {
  if (quantized_) return;
  // The vectorized quantization is bit for bit the reference's.
  static const auto quantize_row = [] {
    const VectorOps* v = vector_ops();
    return v != nullptr ? v->quantize_absmax : quantize_activations_absmax_ref;
  }();
  const int64_t kp = k_padded();
  pool.parallel_for(tokens_, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      int8_t* q = q_.data() + t * kp;
      const ActivationRowQuant r = quantize_row(x_ + t * k_, k_, q);
      for (int64_t i = k_; i < kp; ++i) q[i] = 0;
      scale_[t] = r.scale;
      sum_[t] = r.sum;
    }
  });
  quantized_ = true;
}

}  // namespace lowbit
