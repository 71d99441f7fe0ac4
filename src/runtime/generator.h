// The generation loop: evaluate the prompt in one batch, then sample, stream
// and evaluate one token at a time until the limit or an end token.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/decoder.h"
#include "runtime/sampler.h"
#include "tokenizer/tokenizer.h"

namespace lowbit {

struct GenerateOptions {
  int64_t n_predict = 128;
  SamplerParams sampling;
  // llama2.c's rules (run.c): n_predict counts positions including the prompt,
  // generation stops when BOS is sampled, and pieces print with its decode
  // (leading space dropped after BOS, unprintable single bytes skipped).
  bool llama2c_rules = false;
  // The decoder already holds the prompt's first cached_prefix tokens (its
  // pos() is that, and it is below the prompt's length): only the rest is
  // evaluated. A server keeps a conversation's KV cache this way.
  int64_t cached_prefix = 0;
};

struct GenerateResult {
  std::vector<int32_t> prompt_tokens;
  std::vector<int32_t> generated;  // sampled tokens, end token excluded
  double prompt_seconds = 0;
  double generate_seconds = 0;     // from the first sampled token's evaluation on
  std::vector<float> prompt_logits;  // [V] at the last prompt position
};

// Streams text to on_text as it is produced. For llama2c_rules the prompt's
// own pieces are streamed first (as run.c prints them).
GenerateResult generate_text(Decoder& decoder, const Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                        const GenerateOptions& options, const std::function<void(std::string_view)>& on_text);

// run.c's decode + safe_printf: the text printed for `token` following `prev`.
// Prompt tokens a KV cache holding `cached` can keep: the longest common
// prefix, short of the prompt's last token (its logits sample the first
// reply token, so it is always evaluated). GenerateOptions::cached_prefix.
int64_t reusable_prefix(const std::vector<int32_t>& cached, const std::vector<int32_t>& prompt);

std::string llama2c_piece(const Tokenizer& tokenizer, int32_t prev, int32_t token);

}  // namespace lowbit
