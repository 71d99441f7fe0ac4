#include "runtime/token_logprobs.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace lowbit {

void fill_token_logprobs(const float* logits, int64_t n_vocab, int n_top, SampledToken& token) {
  if (token.id < 0 || token.id >= n_vocab) fail("logprobs: token ", token.id, " is outside the vocabulary of ", n_vocab);
  if (n_top < 0) fail("logprobs: ", n_top, " alternatives asked");
  // log p(i) = logits[i] - log(sum exp(logits)), summed from the maximum so
  // nothing overflows; double keeps the sum of 10^5 terms exact enough.
  float max = logits[0];
  for (int64_t i = 1; i < n_vocab; ++i) max = std::max(max, logits[i]);
  double sum = 0;
  for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i]) - max);
  const double log_z = static_cast<double>(max) + std::log(sum);
  token.has_logprobs = true;
  token.logprob = static_cast<float>(logits[token.id] - log_z);

  // The n_top best by insertion into a short sorted list: n_top is small
  // (OpenAI allows 20), so one pass over the vocabulary beats a sort.
  const size_t n = static_cast<size_t>(std::min<int64_t>(n_top, n_vocab));
  std::vector<TokenLogprob>& top = token.top;
  top.clear();
  top.reserve(n);
  for (int64_t i = 0; i < n_vocab && n > 0; ++i) {
    const float l = logits[i];
    if (top.size() == n && l <= top.back().logprob) continue;  // ties keep the lower id
    if (top.size() == n) top.pop_back();
    auto at = std::upper_bound(top.begin(), top.end(), l,
                               [](float v, const TokenLogprob& e) { return v > e.logprob; });
    top.insert(at, {static_cast<int32_t>(i), l});
  }
  for (TokenLogprob& e : top) e.logprob = static_cast<float>(e.logprob - log_z);
}

}  // namespace lowbit
