#include "model/decoder.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/half.h"
#include "model/ops.h"

namespace lowbit {

Decoder::Decoder(const Model& model, ThreadPool& pool, int64_t max_batch, KvCacheType kv_type)
    : model_(model), pool_(pool), max_batch_(std::max<int64_t>(1, max_batch)), kv_type_(kv_type) {
  const ModelConfig& c = model.config();
  const int64_t B = max_batch_, D = c.n_embd, Q = c.q_dim(), KV = c.kv_dim(), F = c.n_ff;
  const auto sz = [](int64_t n) { return static_cast<size_t>(n); };
  x_ = AlignedBuffer<float>(sz(B * D));
  xn_ = AlignedBuffer<float>(sz(B * std::max(D, Q)));
  q_ = AlignedBuffer<float>(sz(B * Q));
  k_ = AlignedBuffer<float>(sz(B * KV));
  v_ = AlignedBuffer<float>(sz(B * KV));
  att_ = AlignedBuffer<float>(sz(B * Q));
  proj_ = AlignedBuffer<float>(sz(B * D));
  gate_ = AlignedBuffer<float>(sz(B * F));
  up_ = AlignedBuffer<float>(sz(B * F));
  scores_ = AlignedBuffer<float>(sz(pool.size() * model.n_ctx()));
  act_ = ActivationBatch(B, std::max({D, Q, F}));
  const int64_t cache = c.n_layer * model.n_ctx() * KV;
  if (kv_type_ == KvCacheType::F16) {
    k_cache16_ = AlignedBuffer<uint16_t>(sz(cache));
    v_cache16_ = AlignedBuffer<uint16_t>(sz(cache));
  } else {
    k_cache32_ = AlignedBuffer<float>(sz(cache));
    v_cache32_ = AlignedBuffer<float>(sz(cache));
  }
}

void Decoder::truncate(int64_t n) {
  if (n < 0 || n > pos_) fail("cannot truncate a sequence of ", pos_, " positions to ", n);
  pos_ = n;
}

void Decoder::eval(const int32_t* tokens, int64_t n, float* logits, bool all_logits) {
  if (n <= 0) fail("nothing to evaluate: empty token list");
  if (pos_ + n > model_.n_ctx())
    fail("context overflow: ", pos_, " positions used + ", n, " new tokens > context length ", model_.n_ctx(),
         " (raise it with --ctx)");
  const int64_t V = model_.config().n_vocab;
  for (int64_t done = 0; done < n; done += max_batch_) {
    const int64_t chunk = std::min(max_batch_, n - done);
    const bool last = done + chunk == n;
    if (all_logits) {
      eval_batch(tokens + done, chunk, logits + done * V, true);
    } else {
      eval_batch(tokens + done, chunk, last ? logits : nullptr, false);
    }
  }
}

void Decoder::matmul(const Linear& l, const ActivationBatch& in, float* y) {
  l.matmul->forward(in, y, pool_);
  if (l.out_scale != 1.0f) {
    const int64_t n = in.tokens() * l.matmul->rows();
    for (int64_t i = 0; i < n; ++i) y[i] *= l.out_scale;
  }
}

void Decoder::attention(int64_t layer, int64_t n) {
  const ModelConfig& c = model_.config();
  const int64_t H = c.n_head, Dh = c.head_dim, Q = c.q_dim(), KV = c.kv_dim();
  const int64_t group = c.n_head / c.n_head_kv;
  const int64_t ctx = model_.n_ctx();
  const int64_t cache_base = layer * ctx * KV;
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dh));
  // One work item per (token, head).
  pool_.parallel_for(n * H, 1, [&](int64_t begin, int64_t end, int thread) {
    float* s = scores_.data() + thread * ctx;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / H, h = item % H;
      const int64_t p = pos_ + t;  // attends to positions 0..p
      const float* qv = q_.data() + t * Q + h * Dh;
      const int64_t kv_off = (h / group) * Dh;
      for (int64_t j = 0; j <= p; ++j) {
        const int64_t at = cache_base + j * KV + kv_off;
        float dot = 0;
        if (kv_type_ == KvCacheType::F16) {
          for (int64_t d = 0; d < Dh; ++d) dot += qv[d] * fp16_to_float(k_cache16_[at + d]);
        } else {
          for (int64_t d = 0; d < Dh; ++d) dot += qv[d] * k_cache32_[at + d];
        }
        s[j] = dot * scale;
      }
      softmax(s, p + 1);
      float* out = att_.data() + t * Q + h * Dh;
      std::fill(out, out + Dh, 0.0f);
      for (int64_t j = 0; j <= p; ++j) {
        const int64_t at = cache_base + j * KV + kv_off;
        const float w = s[j];
        if (kv_type_ == KvCacheType::F16) {
          for (int64_t d = 0; d < Dh; ++d) out[d] += w * fp16_to_float(v_cache16_[at + d]);
        } else {
          for (int64_t d = 0; d < Dh; ++d) out[d] += w * v_cache32_[at + d];
        }
      }
    }
  });
}

void Decoder::eval_batch(const int32_t* tokens, int64_t n, float* logits, bool all_logits) {
  const ModelConfig& c = model_.config();
  const int64_t D = c.n_embd, Q = c.q_dim(), KV = c.kv_dim(), F = c.n_ff;
  const int64_t ctx = model_.n_ctx();
  float* x = x_.data();
  float* xn = xn_.data();
  for (int64_t t = 0; t < n; ++t) model_.embed(tokens[t], x + t * D);

  for (int64_t l = 0; l < c.n_layer; ++l) {
    const LayerWeights& L = model_.layers()[static_cast<size_t>(l)];
    // Attention block.
    for (int64_t t = 0; t < n; ++t) rms_norm(x + t * D, L.attn_norm.data(), D, c.rms_eps, xn + t * D);
    act_.set(xn, n, D);
    matmul(L.wq, act_, q_.data());
    matmul(L.wk, act_, k_.data());
    matmul(L.wv, act_, v_.data());
    for (int64_t t = 0; t < n; ++t) {
      const int64_t p = pos_ + t;
      rope(q_.data() + t * Q, c.n_head, c.head_dim, c.n_rot, p, c.rope_theta, c.rope_style);
      rope(k_.data() + t * KV, c.n_head_kv, c.head_dim, c.n_rot, p, c.rope_theta, c.rope_style);
      const int64_t at = (l * ctx + p) * KV;
      for (int64_t i = 0; i < KV; ++i) {
        if (kv_type_ == KvCacheType::F16) {
          k_cache16_[at + i] = float_to_fp16(k_[t * KV + i]);
          v_cache16_[at + i] = float_to_fp16(v_[t * KV + i]);
        } else {
          k_cache32_[at + i] = k_[t * KV + i];
          v_cache32_[at + i] = v_[t * KV + i];
        }
      }
    }
    attention(l, n);
    if (c.sub_norms)
      for (int64_t t = 0; t < n; ++t)
        rms_norm(att_.data() + t * Q, L.attn_sub_norm.data(), Q, c.rms_eps, att_.data() + t * Q);
    act_.set(att_.data(), n, Q);
    matmul(L.wo, act_, proj_.data());
    for (int64_t i = 0; i < n * D; ++i) x[i] += proj_[i];

    // Feed-forward block.
    for (int64_t t = 0; t < n; ++t) rms_norm(x + t * D, L.ffn_norm.data(), D, c.rms_eps, xn + t * D);
    act_.set(xn, n, D);
    matmul(L.w_gate, act_, gate_.data());
    matmul(L.w_up, act_, up_.data());
    for (int64_t t = 0; t < n; ++t) {
      float* g = gate_.data() + t * F;
      gated_activation(g, up_.data() + t * F, F, c.ffn_act);
      if (c.sub_norms) rms_norm(g, L.ffn_sub_norm.data(), F, c.rms_eps, g);
    }
    act_.set(gate_.data(), n, F);
    matmul(L.w_down, act_, proj_.data());
    for (int64_t i = 0; i < n * D; ++i) x[i] += proj_[i];
  }
  pos_ += n;

  if (logits == nullptr) return;
  const int64_t first = all_logits ? 0 : n - 1;
  for (int64_t t = first; t < n; ++t)
    rms_norm(x + t * D, model_.output_norm().data(), D, c.rms_eps, xn + (t - first) * D);
  act_.set(xn, n - first, D);
  matmul(model_.output(), act_, logits);
}

}  // namespace lowbit
