#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace lowbit {

int32_t argmax(const float* logits, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<int32_t>(best);
}

Sampler::Sampler(const SamplerParams& params, int64_t n_vocab)
    : params_(params), n_vocab_(n_vocab), rng_(params.seed) {
  if (n_vocab <= 0) fail("sampler: vocabulary size ", n_vocab);
  if (params.top_p <= 0) fail("sampler: top-p must be > 0, got ", params.top_p);
  if (params.repeat_penalty <= 0) fail("sampler: repeat penalty must be > 0, got ", params.repeat_penalty);
  candidates_.reserve(static_cast<size_t>(n_vocab));
  probs_.reserve(static_cast<size_t>(n_vocab));
}

int32_t Sampler::sample(const float* logits, std::span<const int32_t> history) {
  candidates_.clear();
  for (int64_t i = 0; i < n_vocab_; ++i) candidates_.push_back({static_cast<int32_t>(i), logits[i]});

  const bool penalties =
      params_.repeat_penalty != 1.0f || params_.presence_penalty != 0 || params_.frequency_penalty != 0;
  if (penalties && params_.repeat_last_n != 0) {
    // Each distinct recent token is penalised once for repeating and presence,
    // and once per occurrence for frequency (as llama.cpp does). The window is
    // sorted so equal tokens are neighbours: no pass over the vocabulary.
    const size_t n = params_.repeat_last_n < 0 ? history.size()
                                               : std::min(history.size(), static_cast<size_t>(params_.repeat_last_n));
    recent_.assign(history.end() - static_cast<std::ptrdiff_t>(n), history.end());
    std::sort(recent_.begin(), recent_.end());
    for (size_t i = 0; i < recent_.size();) {
      const int32_t id = recent_[i];
      size_t count = 0;
      while (i < recent_.size() && recent_[i] == id) ++i, ++count;
      if (id < 0 || id >= n_vocab_) continue;
      float& l = candidates_[static_cast<size_t>(id)].logit;
      l = l > 0 ? l / params_.repeat_penalty : l * params_.repeat_penalty;
      l -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
    }
  }

  auto by_logit = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  if (params_.temperature <= 0) {
    return std::min_element(candidates_.begin(), candidates_.end(), by_logit)->id;
  }
  size_t keep = candidates_.size();
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < keep) {
    keep = static_cast<size_t>(params_.top_k);
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(keep),
                      candidates_.end(), by_logit);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }
  candidates_.resize(keep);

  // Probabilities at temperature 1 decide top-p and min-p (llama.cpp applies
  // temperature last); the draw uses the tempered distribution.
  auto softmax_into = [&](float temperature) {
    probs_.resize(candidates_.size());
    const float max = candidates_[0].logit;
    double sum = 0;
    for (size_t i = 0; i < candidates_.size(); ++i) {
      probs_[i] = std::exp((candidates_[i].logit - max) / temperature);
      sum += probs_[i];
    }
    for (auto& p : probs_) p = static_cast<float>(p / sum);
  };
  softmax_into(1.0f);
  if (params_.top_p < 1.0f) {
    double cum = 0;
    size_t n = 0;
    while (n < candidates_.size()) {
      cum += probs_[n++];
      if (cum >= params_.top_p) break;
    }
    candidates_.resize(std::max<size_t>(n, 1));
    probs_.resize(candidates_.size());
  }
  if (params_.min_p > 0) {
    const float threshold = params_.min_p * probs_[0];
    size_t n = 1;
    while (n < candidates_.size() && probs_[n] >= threshold) ++n;
    candidates_.resize(n);
  }
  softmax_into(params_.temperature);
  const double r = rng_.uniform();
  double cum = 0;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    cum += probs_[i];
    if (r < cum) return candidates_[i].id;
  }
  return candidates_.back().id;
}

}  // namespace lowbit
