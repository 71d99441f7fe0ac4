#include "runtime/generator.h"

#include <cctype>

#include "core/error.h"
#include "core/timer.h"

namespace lowbit {

namespace {
constexpr int32_t kLlama2cBos = 1;
}

std::string llama2c_piece(const Tokenizer& tokenizer, int32_t prev, int32_t token) {
  std::string piece = tokenizer.token_to_piece(token);
  if (prev == kLlama2cBos && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
  if (piece.size() == 1) {
    const unsigned char b = static_cast<unsigned char>(piece[0]);
    if (!(std::isprint(b) || std::isspace(b))) return {};
  }
  return piece;
}

int64_t reusable_prefix(const std::vector<int32_t>& cached, const std::vector<int32_t>& prompt) {
  size_t same = 0;
  while (same < cached.size() && same + 1 < prompt.size() && cached[same] == prompt[same]) ++same;
  return static_cast<int64_t>(same);
}

GenerateResult generate_text(Decoder& decoder, const Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                        const GenerateOptions& options, const std::function<void(std::string_view)>& on_text) {
  if (prompt.empty()) fail("the prompt has no tokens (and the vocabulary adds no BOS)");
  const int64_t V = decoder.model().config().n_vocab;
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  // How many tokens to sample.
  int64_t budget = options.n_predict;
  if (options.llama2c_rules) {
    int64_t steps = options.n_predict;
    if (steps <= 0 || steps > decoder.model().n_ctx()) steps = decoder.model().n_ctx();
    budget = steps - n_prompt + 1;
  } else if (budget < 0) {
    budget = decoder.model().n_ctx() - n_prompt;
  }
  if (n_prompt > decoder.model().n_ctx())
    fail("prompt of ", n_prompt, " tokens does not fit the context of ", decoder.model().n_ctx(), " (--ctx)");
  budget = std::min(budget, decoder.model().n_ctx() - n_prompt + 1);

  GenerateResult r;
  r.prompt_tokens = prompt;
  if (options.llama2c_rules)
    for (int64_t i = 1; i < n_prompt; ++i) on_text(llama2c_piece(tokenizer, prompt[i - 1], prompt[i]));

  const int64_t cached = options.cached_prefix;
  if (cached < 0 || cached >= n_prompt || decoder.pos() != cached)
    fail("generate: ", cached, " cached prompt tokens of ", n_prompt, " with the decoder at position ", decoder.pos());
  std::vector<float> logits(static_cast<size_t>(V));
  const double t0 = now_seconds();
  decoder.eval(prompt.data() + cached, n_prompt - cached, logits.data());
  r.prompt_seconds = now_seconds() - t0;
  r.prompt_logits = logits;

  Sampler sampler(options.sampling, V);
  std::vector<int32_t> history = prompt;
  history.reserve(static_cast<size_t>(n_prompt + std::max<int64_t>(budget, 0)));
  const double t1 = now_seconds();
  for (int64_t i = 0; i < budget; ++i) {
    const int32_t next = sampler.sample(logits.data(), history);
    const bool end = options.llama2c_rules ? next == kLlama2cBos : tokenizer.is_end_of_generation(next);
    if (end) break;
    on_text(options.llama2c_rules ? llama2c_piece(tokenizer, history.back(), next) : tokenizer.token_to_piece(next));
    history.push_back(next);
    r.generated.push_back(next);
    // The last sampled token needs no evaluation (nothing samples after it),
    // and neither does one that would run past the context.
    if (i + 1 == budget || decoder.pos() >= decoder.model().n_ctx()) break;
    decoder.eval(&next, 1, logits.data());
  }
  r.generate_seconds = now_seconds() - t1;
  return r;
}

}  // namespace lowbit
