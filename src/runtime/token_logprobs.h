// Log-probabilities of a sampled token and of the model's most likely
// alternatives, as OpenAI's `logprobs` report them. They are the log-softmax
// of the raw logits: the model's distribution, before the penalties, top-k/p,
// min-p and temperature that only shape the draw (llama-server reports the
// same by default).
#pragma once

#include <cstdint>
#include <vector>

namespace lowbit {

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0;
};

// What the batched generator hands a request for each token it sampled.
struct SampledToken {
  int32_t id = 0;
  bool has_logprobs = false;      // the request asked for them
  float logprob = 0;              // of id
  std::vector<TokenLogprob> top;  // the n most likely tokens, most likely first (ties: lower id)
};

// Sets token.logprob (of token.id) and token.top (n_top entries, at most
// n_vocab) from one row of logits [n_vocab].
void fill_token_logprobs(const float* logits, int64_t n_vocab, int n_top, SampledToken& token);

}  // namespace lowbit
