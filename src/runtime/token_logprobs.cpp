#include "runtime/token_logprobs.h"

#include <algorithm>

#include "core/error.h"
#include "model/ops.h"
#include "runtime/sampler.h"

namespace lowbit {

void fill_token_logprobs(const float* logits, int64_t n_vocab, int n_top, SampledToken& token) {
  if (token.id < 0 || token.id >= n_vocab) fail("logprobs: token ", token.id, " is outside the vocabulary of ", n_vocab);
  if (n_top < 0) fail("logprobs: ", n_top, " alternatives asked");
  require_finite_logits(logits, n_vocab, "logprobs");  // a prompt's rows are not sampled: checked here
  // log p(i) = logits[i] - log(sum exp(logits)), summed from the maximum so
  // nothing overflows, the sum in double (VectorOps::log_sum_exp: a 128k
  // vocabulary in ~0.1 ms, where a scalar loop of double exps took ~0.6 ms).
  const double log_z = best_vector_ops().log_sum_exp(logits, n_vocab);
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
