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

void require_finite_logits(const float* logits, int64_t n, const char* who) {
  bool ok = true;  // no early exit: the loop stays branch-free (58 us over a 128k vocabulary)
  for (int64_t i = 0; i < n; ++i) ok &= logits[i] < INFINITY;
  if (ok) return;
  int64_t i = 0;
  while (logits[i] < INFINITY) ++i;
  fail(who, ": the logit of token ", i, " is ", logits[i],
       ": the model computed a non-finite value (damaged weights, or activations out of float range)");
}

Sampler::Sampler(const SamplerParams& params, int64_t n_vocab)
    : params_(params), n_vocab_(n_vocab), rng_(params.seed) {
  if (n_vocab <= 0) fail("sampler: vocabulary size ", n_vocab);
  if (params.top_p <= 0) fail("sampler: top-p must be > 0, got ", params.top_p);
  if (params.repeat_penalty <= 0) fail("sampler: repeat penalty must be > 0, got ", params.repeat_penalty);
  candidates_.reserve(static_cast<size_t>(n_vocab));
}

int32_t Sampler::sample(const float* logits, std::span<const int32_t> history) {
  const bool penalties = (params_.repeat_penalty != 1.0f || params_.presence_penalty != 0 ||
                          params_.frequency_penalty != 0) &&
                         params_.repeat_last_n != 0;
  bool finite = true;  // checked in the pass that reads the logits anyway: a pass of its own cost 58 us
  if (params_.temperature <= 0 && !penalties) {
    // Greedy with nothing to change the logits: the first largest, straight
    // from them (through the candidates and min_element it took ~3x as long).
    int64_t best = 0;
    for (int64_t i = 0; i < n_vocab_; ++i) {
      finite &= logits[i] < INFINITY;
      if (logits[i] > logits[best]) best = i;
    }
    if (!finite) require_finite_logits(logits, n_vocab_, "sampler");  // throws, naming the token
    return static_cast<int32_t>(best);
  }
  auto by_logit = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  candidates_.clear();
  const bool top_k = params_.top_k > 0 && params_.top_k < n_vocab_;
  if (top_k && !penalties) {
    // The k best straight from the logits, by_logit's worst of them on top of
    // a heap: a later logit enters only when larger (an equal one ranks
    // below: a higher id), so these are partial_sort's k, in fewer passes
    // than copying every logit first (~210 -> ~70 us a token, 128k, k 40).
    const size_t k = static_cast<size_t>(params_.top_k);
    for (int64_t i = 0; i < n_vocab_; ++i) {
      const float l = logits[i];
      finite &= l < INFINITY;
      if (candidates_.size() < k) {
        candidates_.push_back({static_cast<int32_t>(i), l});
        std::push_heap(candidates_.begin(), candidates_.end(), by_logit);
      } else if (l > candidates_.front().logit) {
        std::pop_heap(candidates_.begin(), candidates_.end(), by_logit);
        candidates_.back() = {static_cast<int32_t>(i), l};
        std::push_heap(candidates_.begin(), candidates_.end(), by_logit);
      }
    }
    if (!finite) require_finite_logits(logits, n_vocab_, "sampler");
    std::sort_heap(candidates_.begin(), candidates_.end(), by_logit);
  } else {
    for (int64_t i = 0; i < n_vocab_; ++i) {
      finite &= logits[i] < INFINITY;
      candidates_.push_back({static_cast<int32_t>(i), logits[i]});
    }
    if (!finite) require_finite_logits(logits, n_vocab_, "sampler");
  }

  if (penalties) {
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

  if (params_.temperature <= 0) {
    return std::min_element(candidates_.begin(), candidates_.end(), by_logit)->id;
  }
  // The candidates in order (largest logit first) are needed only as far as
  // the cut-offs and the draw reach: [0, sorted) is sorted and holds the
  // largest, the rest is not. Sorting a 128k vocabulary for every token cost
  // ~14% of a 2B-4T decode step at --top-k 0; top-p, min-p and the draw
  // rarely reach past a few hundred candidates.
  size_t n = candidates_.size(), sorted = 0;
  if (top_k && !penalties) {
    sorted = n;  // the heap's k, sorted
  } else if (top_k) {
    n = static_cast<size_t>(params_.top_k);
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(n), candidates_.end(),
                      by_logit);
    candidates_.resize(n);
    sorted = n;
  }
  const auto sort_to = [&](size_t want) {  // [0, want) sorted, growing geometrically
    if (want <= sorted) return;
    const size_t to = std::min(n, std::max({want, 2 * sorted, size_t{256}}));
    const auto begin = candidates_.begin() + static_cast<std::ptrdiff_t>(sorted);
    const auto end = candidates_.begin() + static_cast<std::ptrdiff_t>(to);
    if (to < n) std::nth_element(begin, end, candidates_.end(), by_logit);
    std::sort(begin, end, by_logit);
    sorted = to;
  };
  sort_to(1);
  const float max = candidates_[0].logit;
  // exp((logit - max) / temperature) of candidate i, and their sum over
  // [0, count) (in the candidates' order: sorted where the count is a cut).
  const auto weight = [&](size_t i, float temperature) { return std::exp((candidates_[i].logit - max) / temperature); };
  const auto total = [&](size_t count, float temperature) {
    double sum = 0;
    for (size_t i = 0; i < count; ++i) sum += weight(i, temperature);
    return sum;
  };

  // Probabilities at temperature 1 decide top-p and min-p (llama.cpp applies
  // temperature last); the draw uses the tempered distribution.
  size_t keep = n;
  if (params_.top_p < 1.0f || params_.min_p > 0) {
    const double sum = total(n, 1.0f);
    const auto prob = [&](size_t i) {
      sort_to(i + 1);
      return static_cast<float>(weight(i, 1.0f) / sum);
    };
    // Both cut-offs keep a prefix, the shorter wins: min-p first, whose
    // prefix is short where the distribution has a peak, bounds top-p's walk.
    if (params_.min_p > 0) {
      const float threshold = params_.min_p * prob(0);
      size_t m = 1;
      while (m < keep && prob(m) >= threshold) ++m;
      keep = m;
    }
    if (params_.top_p < 1.0f) {
      double cum = 0;
      size_t m = 0;
      while (m < keep) {
        cum += prob(m++);
        if (cum >= params_.top_p) break;
      }
      keep = std::max<size_t>(m, 1);
    }
  }
  const double sum = total(keep, params_.temperature);
  const double r = rng_.uniform();
  double cum = 0;
  for (size_t i = 0; i < keep; ++i) {
    sort_to(i + 1);
    cum += static_cast<float>(weight(i, params_.temperature) / sum);
    if (r < cum) return candidates_[i].id;
  }
  sort_to(keep);
  return candidates_[keep - 1].id;
}

}  // namespace lowbit
