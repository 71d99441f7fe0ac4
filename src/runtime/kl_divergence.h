// Comparing a model's next-token distributions with a base model's (the float
// original, or the reference kernel): KL divergence, top-1 agreement, the
// change in the probability of the token that came next, and the raw logit
// difference that decides whether a lossless kernel really is one.
#pragma once

#include <cstdint>

#include "runtime/perplexity.h"

namespace lowbit {

// out[i] = logits[i] - log(sum_j exp(logits[j])) in double (float
// log-probabilities would put ~1e-8 of rounding noise into a KL divergence,
// more than a lossless kernel's), the shift VectorOps::log_sum_exp's (each
// exp in float, summed in double, as token_nll). out may alias nothing.
void log_softmax(const float* logits, int64_t n, double* out);
// In place, for log-probabilities that need renormalizing.
void log_softmax(double* values, int64_t n);

// KL(P || Q) = sum_i p_i (log p_i - log q_i) from log-probabilities [n], in
// nats; terms with p_i == 0 contribute 0.
double kl_divergence(const double* log_p, const double* log_q, int64_t n);

// What DistributionComparison keeps of one position (measure_position).
struct PositionComparison {
  double kld = 0;
  bool same_top = false;
  int32_t target = -1;
  double base_log_prob = 0, log_prob = 0;  // of the target, when there is one
};

// base_log_probs, log_probs: [n_vocab] normalized log-probabilities.
// target: the token that came next, or -1.
PositionComparison measure_position(const double* base_log_probs, const double* log_probs, int64_t n_vocab,
                                    int32_t target);

// Statistics over many positions of (base, other) distribution pairs, as
// llama.cpp's --kl-divergence reports them.
class DistributionComparison {
 public:
  // As add(measure_position(...)): a target's Δp and NLLs are recorded.
  void add(const double* base_log_probs, const double* log_probs, int64_t n_vocab, int32_t target);
  // Positions measured apart (on a pool's threads) and added in order give
  // the same sums as add() on each.
  void add(const PositionComparison& p);

  int64_t count() const { return count_; }
  double mean_kld() const;
  double kld_error() const;  // standard error of the mean KLD
  double max_kld() const { return max_kld_; }
  double top1_agreement() const;  // fraction of positions with the same argmax
  double top1_error() const;      // its standard error, sqrt(f (1 - f) / (n - 1))
  // Δp = p(target) - p_base(target), over positions with a target.
  double mean_abs_dp() const;
  double max_abs_dp() const { return max_abs_dp_; }
  const NllStats& nll() const { return nll_; }            // the other model's NLL of the targets
  const NllStats& base_nll() const { return base_nll_; }  // the base's

 private:
  double kld_sum_ = 0, kld_sum2_ = 0, max_kld_ = 0;
  int64_t count_ = 0, same_top_ = 0;
  double abs_dp_sum_ = 0, max_abs_dp_ = 0;
  int64_t dp_count_ = 0;
  NllStats nll_, base_nll_;
};

// The largest |other - base| over logits, and the largest |base| for scale.
struct LogitDifference {
  double max_abs_diff = 0;
  double max_abs_base = 0;

  void add(const float* base, const float* other, int64_t n);
  // max_abs_diff / max_abs_base (0 when both are 0).
  double relative() const;
  // True when the difference is no more than float accumulation-order noise:
  // max_abs_diff <= tolerance * max_abs_base.
  bool within(double relative_tolerance) const;
};

}  // namespace lowbit
