// Generation for several clients at once (continuous batching). Each request
// takes a sequence slot of one multi-sequence Decoder, and one engine thread
// evaluates the next tokens of every active slot in a single pass over the
// weights: one token for each slot that is generating, and prompt tokens of
// new requests in the room left (at most max_batch rows a pass, and at most
// prompt_chunk prompt rows beside generating slots). Decode reads
// every weight byte per pass, so N slots decoding together cost about what one
// does while memory-bound: the many-token GEMM kernels do the rest.
//
// A slot keeps its KV cache when its request ends. A new request takes the
// free slot whose cached tokens share the longest prefix with its prompt (a
// chat's next turn resends the conversation) and evaluates only the rest.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "model/decoder.h"
#include "runtime/sampler.h"
#include "runtime/token_logprobs.h"
#include "tokenizer/tokenizer.h"

namespace lowbit {

struct BatchedRequest {
  std::vector<int32_t> prompt;  // non-empty, shorter than the context
  int64_t n_predict = 128;      // tokens to sample at most (< 0: until the context is full)
  SamplerParams sampling;
  // < 0: none. Otherwise each sampled token comes with its log-probability
  // and this many most likely alternatives (runtime/token_logprobs.h).
  int logprobs = -1;
  // Also the log-probabilities of the prompt's tokens after the first (each
  // from the logits of the position before it), as `echo` with `logprobs`
  // reports them. The whole prompt is evaluated: a cached prefix has no
  // logits to give.
  bool prompt_logprobs = false;
};

struct BatchedResult {
  std::vector<int32_t> generated;  // sampled tokens handed to on_token, end token excluded
  std::vector<SampledToken> prompt_logprobs;  // request.prompt_logprobs: prompt tokens [1, n), in order
  int64_t cached = 0;              // prompt tokens found in the slot's KV cache
  int slot = 0;                    // the sequence slot the request ran in
  bool context_full = false;       // stopped because the context had no room left
  // Seconds: waiting for a slot; from the slot to the first sampled token (the
  // prompt's passes, shared with other requests' rows); from the first sampled
  // token to the last.
  double wait_seconds = 0, prompt_seconds = 0, generate_seconds = 0;
};

struct BatchedOptions {
  int n_slots = 4;         // requests generating at once, each in its own sequence
  int64_t max_batch = kPromptBatch;  // most rows in one pass (at least n_slots are taken)
  // Most prompt rows in a pass that also carries generating slots' tokens.
  // Past the weights' read time a pass costs about a prompt row's compute per
  // row (prefill is compute-bound), and every generating slot waits for the
  // whole pass: a long prompt taken 64 rows at a time stalls them for a
  // 64-token prefill per token. A prompt alone takes max_batch rows a pass.
  int64_t prompt_chunk = 16;
  KvCacheType kv_type = KvCacheType::F16;
  // Called on the engine thread with each pass's rows before they are
  // evaluated (tests, tracing); it must not call generate().
  std::function<void(const BatchRow* rows, int64_t n)> on_pass;
};

class BatchedGenerator {
 public:
  // Each slot has a KV cache of the model's context (its pages are mapped
  // when first written: with huge pages, the first token of a slot maps 2 MiB
  // per layer for k and for v).
  BatchedGenerator(const Model& model, const Tokenizer& tokenizer, ThreadPool& pool, const BatchedOptions& options);
  ~BatchedGenerator();  // after every generate() has returned
  BatchedGenerator(const BatchedGenerator&) = delete;
  BatchedGenerator& operator=(const BatchedGenerator&) = delete;

  // Runs one request beside the others and blocks until it ends: waits for a
  // free slot, then calls on_token on this thread with each sampled token, in
  // order (with its log-probabilities if the request asked). on_token
  // returning false ends the request there. Throws Error for
  // a bad request or a failed evaluation (the request's slot then forgets its
  // cache; other requests go on).
  BatchedResult generate(const BatchedRequest& request, const std::function<bool(const SampledToken&)>& on_token);

  int n_slots() const { return static_cast<int>(slots_.size()); }
  // Slots held by a request (running, or finished and not yet returned).
  int busy_slots() const;
  // pause() holds the engine before its next pass until resume(): requests
  // admitted meanwhile start in the same pass. Tests use it to make requests
  // overlap whatever the scheduler does.
  void pause();
  void resume();
  // Passes over the weights so far and the rows they evaluated (tests, stats).
  int64_t passes() const;
  int64_t rows_evaluated() const;

 private:
  struct Slot;
  void engine_loop();
  // A row of a pass whose logits are wanted: to sample the slot's next token
  // (prompt_pos < 0), or for the log-probability of prompt[prompt_pos + 1].
  struct LogitRow {
    int slot = 0;
    int64_t prompt_pos = -1;
  };
  // Under mutex_: the rows of the next pass, and what each logits row is for.
  void plan_pass(std::vector<BatchRow>& rows, std::vector<LogitRow>& logit_rows);
  // Under mutex_: a sampled token for slot s.
  void take_token(Slot& s, SampledToken&& token);
  void finish(Slot& s);

  const Model& model_;
  const Tokenizer& tokenizer_;
  const int64_t prompt_chunk_;
  const std::function<void(const BatchRow*, int64_t)> on_pass_;
  Decoder decoder_;  // touched by the engine thread only
  std::vector<std::unique_ptr<Slot>> slots_;
  mutable std::mutex mutex_;
  std::condition_variable work_;        // engine: a slot became active or wants cancelling
  std::condition_variable slot_freed_;  // requests: a slot became free
  bool stopping_ = false;
  bool paused_ = false;
  uint64_t clock_ = 0;  // admission counter: the least recently used free slot goes first
  int64_t passes_ = 0, rows_ = 0;
  std::thread engine_;
};

}  // namespace lowbit
