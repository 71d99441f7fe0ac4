#include "runtime/kl_divergence.h"

#include <algorithm>
#include <cmath>

#include "model/ops.h"

namespace lowbit {

// The shift as token_nll's (perplexity.h), so that a comparison's PPL(model)
// is the run's own PPL.
void log_softmax(const float* logits, int64_t n, double* out) {
  const double shift = best_vector_ops().log_sum_exp(logits, n);
  for (int64_t i = 0; i < n; ++i) out[i] = logits[i] - shift;
}

void log_softmax(double* values, int64_t n) {
  const double max = *std::max_element(values, values + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(values[i] - max);
  const double shift = max + std::log(sum);
  for (int64_t i = 0; i < n; ++i) values[i] -= shift;
}

double kl_divergence(const double* log_p, const double* log_q, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double p = std::exp(log_p[i]);
    if (p > 0) sum += p * (log_p[i] - log_q[i]);
  }
  return sum;
}

PositionComparison measure_position(const double* base_log_probs, const double* log_probs, int64_t n_vocab,
                                    int32_t target) {
  PositionComparison p;
  p.kld = kl_divergence(base_log_probs, log_probs, n_vocab);
  const auto top = [n_vocab](const double* v) { return std::max_element(v, v + n_vocab) - v; };
  p.same_top = top(base_log_probs) == top(log_probs);
  p.target = target;
  if (target >= 0) {
    p.base_log_prob = base_log_probs[target];
    p.log_prob = log_probs[target];
  }
  return p;
}

void DistributionComparison::add(const double* base_log_probs, const double* log_probs, int64_t n_vocab,
                                 int32_t target) {
  add(measure_position(base_log_probs, log_probs, n_vocab, target));
}

void DistributionComparison::add(const PositionComparison& p) {
  kld_sum_ += p.kld;
  kld_sum2_ += p.kld * p.kld;
  max_kld_ = std::max(max_kld_, p.kld);
  ++count_;
  if (p.same_top) ++same_top_;
  if (p.target < 0) return;
  const double dp = std::exp(p.log_prob) - std::exp(p.base_log_prob);
  abs_dp_sum_ += std::fabs(dp);
  max_abs_dp_ = std::max(max_abs_dp_, std::fabs(dp));
  ++dp_count_;
  nll_.add(-p.log_prob);
  base_nll_.add(-p.base_log_prob);
}

double DistributionComparison::mean_kld() const { return count_ > 0 ? kld_sum_ / static_cast<double>(count_) : 0.0; }

double DistributionComparison::kld_error() const {
  if (count_ < 2) return 0.0;
  const double m = mean_kld();
  const double variance = kld_sum2_ / static_cast<double>(count_) - m * m;
  return variance > 0 ? std::sqrt(variance / static_cast<double>(count_ - 1)) : 0.0;
}

double DistributionComparison::top1_agreement() const {
  return count_ > 0 ? static_cast<double>(same_top_) / static_cast<double>(count_) : 0.0;
}

double DistributionComparison::top1_error() const {
  if (count_ < 2) return 0.0;
  const double f = top1_agreement();
  return std::sqrt(f * (1 - f) / static_cast<double>(count_ - 1));
}

double DistributionComparison::mean_abs_dp() const {
  return dp_count_ > 0 ? abs_dp_sum_ / static_cast<double>(dp_count_) : 0.0;
}

void LogitDifference::add(const float* base, const float* other, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    max_abs_base = std::max(max_abs_base, std::fabs(static_cast<double>(base[i])));
    const double d = std::fabs(static_cast<double>(other[i]) - base[i]);
    max_abs_diff = std::max(max_abs_diff, std::isnan(d) ? HUGE_VAL : d);  // a NaN is never noise
  }
}

double LogitDifference::relative() const { return max_abs_base > 0 ? max_abs_diff / max_abs_base : max_abs_diff; }

bool LogitDifference::within(double relative_tolerance) const {
  return max_abs_diff <= relative_tolerance * max_abs_base;
}

}  // namespace lowbit
