// Perplexity as llama.cpp's llama-perplexity defines it, so numbers can be
// compared with it: the text's tokens are cut in chunks of n_ctx, each chunk
// is evaluated from an empty cache (its first token replaced by BOS when the
// vocabulary adds BOS), and only the second half is scored -- positions
// n_ctx/2 .. n_ctx-2, each predicting the token after it -- so every scored
// token sees at least n_ctx/2 tokens of context.
//
// The pure functions here do the arithmetic; run_perplexity() drives a Decoder.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/decoder.h"

namespace lowbit {

// -log softmax(logits)[target]: the max is subtracted first, each exponential
// taken in float and their sum in double, as llama.cpp does
// (VectorOps::log_sum_exp at the CPU's best level).
double token_nll(const float* logits, int64_t n_vocab, int32_t target);

// Running sums of per-token negative log-likelihoods.
class NllStats {
 public:
  void add(double nll);
  int64_t count() const { return count_; }
  double mean() const;        // mean NLL (nats)
  double perplexity() const;  // exp(mean NLL)
  // Standard error of the perplexity, llama.cpp's "+/-": the standard error
  // of the mean NLL, sqrt(var / (count - 1)) with var the population variance,
  // times the perplexity (first-order error propagation through exp).
  // 0 when fewer than 2 tokens or no spread.
  double perplexity_error() const;

 private:
  double sum_ = 0, sum2_ = 0;
  int64_t count_ = 0;
};

struct PerplexityPlan {
  int64_t n_ctx = 0;
  int64_t n_chunks = 0;
  int64_t first = 0;  // first scored position, n_ctx / 2
  // Positions scored per chunk: first .. n_ctx-2.
  int64_t scored_per_chunk() const { return n_ctx - 1 - first; }
};

// n_chunks_wanted <= 0: every whole chunk of the text. Throws Error naming
// the limit when the text has fewer than n_ctx tokens or n_ctx < 4.
PerplexityPlan plan_perplexity(int64_t n_tokens, int64_t n_ctx, int64_t n_chunks_wanted);

// The tokens chunk `chunk` is evaluated on: [n_ctx], the first replaced by
// bos when bos >= 0.
std::vector<int32_t> chunk_input(const std::vector<int32_t>& tokens, const PerplexityPlan& plan, int64_t chunk,
                                 int32_t bos);

// Adds the chunk's scored tokens to stats, in order. logits: [n_ctx][n_vocab]
// of the chunk; chunk_tokens: [n_ctx] the text's tokens (not BOS-replaced).
// With a pool the tokens' log-softmax runs on its threads (the same stats).
void score_chunk(const float* logits, const int32_t* chunk_tokens, const PerplexityPlan& plan, int64_t n_vocab,
                 NllStats& stats, ThreadPool* pool = nullptr);

// Evaluates every chunk of the plan from an empty cache and scores it.
// on_chunk(chunk, logits [n_ctx][V], chunk_tokens [n_ctx], stats so far) is
// called after each chunk is scored (progress, saving or comparing logits).
using ChunkCallback = std::function<void(int64_t, const float*, const int32_t*, const NllStats&)>;
NllStats run_perplexity(Decoder& decoder, const std::vector<int32_t>& tokens, const PerplexityPlan& plan, int32_t bos,
                        const ChunkCallback& on_chunk);

}  // namespace lowbit
