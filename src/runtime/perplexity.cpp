#include "runtime/perplexity.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "model/ops.h"
#include "runtime/sampler.h"

namespace lowbit {

double token_nll(const float* logits, int64_t n_vocab, int32_t target) {
  if (target < 0 || target >= n_vocab) fail("token id ", target, " is outside the vocabulary [0, ", n_vocab, ")");
  // log_sum_exp passes over a NaN (its max ignores it, its exp clamps it):
  // a damaged model would score as finite garbage. ~1% of a chunk's decode.
  require_finite_logits(logits, n_vocab, "perplexity");
  return best_vector_ops().log_sum_exp(logits, n_vocab) - logits[target];
}

void NllStats::add(double nll) {
  sum_ += nll;
  sum2_ += nll * nll;
  ++count_;
}

double NllStats::mean() const { return count_ > 0 ? sum_ / static_cast<double>(count_) : 0.0; }

double NllStats::perplexity() const { return std::exp(mean()); }

double NllStats::perplexity_error() const {
  if (count_ < 2) return 0.0;
  const double m = mean();
  const double variance = sum2_ / static_cast<double>(count_) - m * m;
  if (variance <= 0) return 0.0;
  return std::sqrt(variance / static_cast<double>(count_ - 1)) * perplexity();
}

PerplexityPlan plan_perplexity(int64_t n_tokens, int64_t n_ctx, int64_t n_chunks_wanted) {
  if (n_ctx < 4) fail("perplexity needs a context of at least 4 tokens, got ", n_ctx);
  if (n_tokens < n_ctx)
    fail("the text has ", n_tokens, " tokens, fewer than one chunk of the context (", n_ctx,
         "); give a longer text or a smaller -c");
  PerplexityPlan p;
  p.n_ctx = n_ctx;
  p.first = n_ctx / 2;
  p.n_chunks = n_tokens / n_ctx;
  if (n_chunks_wanted > 0) p.n_chunks = std::min(p.n_chunks, n_chunks_wanted);
  return p;
}

std::vector<int32_t> chunk_input(const std::vector<int32_t>& tokens, const PerplexityPlan& plan, int64_t chunk,
                                 int32_t bos) {
  const auto begin = tokens.begin() + chunk * plan.n_ctx;
  std::vector<int32_t> input(begin, begin + plan.n_ctx);
  if (bos >= 0) input[0] = bos;
  return input;
}

void score_chunk(const float* logits, const int32_t* chunk_tokens, const PerplexityPlan& plan, int64_t n_vocab,
                 NllStats& stats, ThreadPool* pool) {
  const int64_t first = plan.first, n = plan.n_ctx - 1 - first;
  std::vector<double> nll(static_cast<size_t>(std::max<int64_t>(n, 0)));
  const auto score = [&](int64_t begin, int64_t end, int) {
    for (int64_t j = begin; j < end; ++j)
      nll[static_cast<size_t>(j)] = token_nll(logits + (first + j) * n_vocab, n_vocab, chunk_tokens[first + j + 1]);
  };
  if (pool != nullptr)
    pool->parallel_for(n, 1, score);
  else
    score(0, n, 0);
  // Added in order: the same sums at any thread count.
  for (double v : nll) stats.add(v);
}

NllStats run_perplexity(Decoder& decoder, const std::vector<int32_t>& tokens, const PerplexityPlan& plan, int32_t bos,
                        const ChunkCallback& on_chunk) {
  const int64_t n_vocab = decoder.model().config().n_vocab;
  std::vector<float> logits(static_cast<size_t>(plan.n_ctx * n_vocab));  // [n_ctx][V]
  NllStats stats;
  for (int64_t c = 0; c < plan.n_chunks; ++c) {
    const std::vector<int32_t> input = chunk_input(tokens, plan, c, bos);
    decoder.truncate(0);
    decoder.eval(input.data(), plan.n_ctx, logits.data(), /*all_logits=*/true);
    const int32_t* chunk_tokens = tokens.data() + c * plan.n_ctx;
    score_chunk(logits.data(), chunk_tokens, plan, n_vocab, stats, &decoder.pool());
    if (on_chunk) on_chunk(c, logits.data(), chunk_tokens, stats);
  }
  return stats;
}

}  // namespace lowbit
