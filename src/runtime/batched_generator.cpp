#include "runtime/batched_generator.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <string>

#include "core/error.h"
#include "core/timer.h"
#include "runtime/generator.h"

namespace lowbit {

// A sequence of the decoder and the request it runs. Fields are under mutex_,
// except sampler, which only the engine thread touches.
struct BatchedGenerator::Slot {
  int index = 0;
  // Kept between requests.
  std::vector<int32_t> cached;  // the tokens at the sequence's positions, once it is free
  uint64_t last_used = 0;
  // The request in the slot.
  bool busy = false;    // a request holds it (until its generate() returns)
  bool active = false;  // the engine still works on it
  bool reset = false;   // the engine truncates the sequence to `keep` before its first rows
  int64_t keep = 0;
  int64_t n_prompt = 0;
  int64_t next_prompt = 0;  // prompt tokens [0, next_prompt) are in the cache or planned
  int64_t budget = 0;       // tokens it may sample
  bool budget_by_context = false;  // the context, not n_predict, set the budget
  int64_t sampled = 0;
  bool has_pending = false;  // `pending` was sampled and handed out, not yet evaluated
  int32_t pending = 0;
  bool cancel = false;  // its request wants no more tokens
  bool context_full = false;
  std::string error;
  std::unique_ptr<Sampler> sampler;
  int logprobs = -1;             // the request's (BatchedRequest::logprobs)
  bool prompt_logprobs = false;  // the request's
  std::vector<SampledToken> prompt_lp;  // the prompt tokens' log-probabilities so far
  std::vector<int32_t> history;  // prompt, then sampled tokens
  std::deque<SampledToken> out;  // sampled, not yet taken by the request
  std::condition_variable ready; // request: tokens in `out`, or the engine is done
  // now_seconds() when the request took the slot, and when its first and last
  // tokens were sampled (0: none yet).
  double admitted = 0, first_token = 0, last_token = 0;
};

BatchedGenerator::BatchedGenerator(const Model& model, const Tokenizer& tokenizer, ThreadPool& pool,
                                   const BatchedOptions& options)
    : model_(model),
      tokenizer_(tokenizer),
      prompt_chunk_(options.prompt_chunk),
      on_pass_(options.on_pass),
      decoder_(model, pool, std::max<int64_t>(options.max_batch, options.n_slots), options.kv_type,
               std::max(1, options.n_slots)) {
  if (options.n_slots < 1) fail("batched generation needs at least 1 slot, not ", options.n_slots);
  if (options.prompt_chunk < 1)
    fail("batched generation needs a prompt chunk of at least 1 row, not ", options.prompt_chunk);
  for (int i = 0; i < options.n_slots; ++i) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->index = i;
  }
  engine_ = std::thread([this] { engine_loop(); });
}

BatchedGenerator::~BatchedGenerator() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  slot_freed_.notify_all();
  engine_.join();
}

int64_t BatchedGenerator::passes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return passes_;
}

int64_t BatchedGenerator::rows_evaluated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

int BatchedGenerator::busy_slots() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return s->busy; }));
}

void BatchedGenerator::pause() {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = true;
}

void BatchedGenerator::resume() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    paused_ = false;
  }
  work_.notify_all();
}

BatchedResult BatchedGenerator::generate(const BatchedRequest& request,
                                         const std::function<bool(const SampledToken&)>& on_token) {
  const int64_t n_ctx = model_.n_ctx(), n_prompt = static_cast<int64_t>(request.prompt.size());
  if (n_prompt == 0) fail("the prompt has no tokens");
  if (n_prompt >= n_ctx) fail("the prompt has ", n_prompt, " tokens; the context holds ", n_ctx);
  const int64_t V = model_.config().n_vocab;
  // Model::embed refuses such a token too, but inside a shared pass: checked
  // here, a bad prompt fails alone instead of every request in its pass.
  for (const int32_t t : request.prompt)
    if (t < 0 || t >= V) fail("prompt token ", t, " is outside the vocabulary of ", V);

  const double called = now_seconds();
  std::unique_lock<std::mutex> lock(mutex_);
  slot_freed_.wait(lock, [&] {
    return stopping_ || std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return !s->busy; });
  });
  if (stopping_) fail("the server is shutting down");
  // The free slot whose cache the prompt can reuse most of, else the one
  // unused longest.
  Slot* slot = nullptr;
  int64_t best = -1;
  for (const auto& s : slots_) {
    if (s->busy) continue;
    const int64_t same = request.prompt_logprobs ? 0 : reusable_prefix(s->cached, request.prompt);
    if (same > best || (same == best && s->last_used < slot->last_used)) best = same, slot = s.get();
  }
  Slot& s = *slot;
  s.busy = s.active = s.reset = true;
  s.keep = s.next_prompt = best;
  s.n_prompt = n_prompt;
  // generate_text's limits: n_predict < 0 fills the context; the last sampled
  // token is never evaluated, so it may take the context's last position + 1.
  const int64_t room = n_ctx - n_prompt + 1;
  s.budget = request.n_predict < 0 ? room - 1 : std::min(request.n_predict, room);
  s.budget_by_context = request.n_predict < 0 || request.n_predict > room;
  s.sampled = 0;
  s.has_pending = s.cancel = s.context_full = false;
  s.error.clear();
  s.out.clear();
  s.sampler = std::make_unique<Sampler>(request.sampling, V);
  s.logprobs = request.logprobs;
  s.prompt_logprobs = request.prompt_logprobs && request.logprobs >= 0;
  s.prompt_lp.clear();
  s.history = request.prompt;
  s.last_used = ++clock_;
  s.admitted = now_seconds();
  s.first_token = s.last_token = 0;
  work_.notify_one();

  BatchedResult r;
  r.cached = best;
  r.slot = s.index;
  bool want_more = true;
  try {
    for (;;) {
      s.ready.wait(lock, [&] { return !s.out.empty() || !s.active; });
      std::deque<SampledToken> got;
      got.swap(s.out);
      const bool done = !s.active;
      lock.unlock();
      for (const SampledToken& t : got) {
        if (!want_more) break;
        r.generated.push_back(t.id);
        want_more = on_token(t);
      }
      lock.lock();
      if (done) break;
      if (!want_more && !s.cancel) {
        s.cancel = true;
        work_.notify_one();
      }
    }
  } catch (...) {  // on_token threw: end the request, free the slot, pass it on
    if (!lock.owns_lock()) lock.lock();
    s.cancel = true;
    work_.notify_one();
    s.ready.wait(lock, [&] { return !s.active; });
    s.busy = false;
    slot_freed_.notify_one();
    throw;
  }
  r.context_full = s.context_full;
  r.prompt_logprobs = std::move(s.prompt_lp);
  r.wait_seconds = s.admitted - called;
  if (s.first_token > 0) {
    r.prompt_seconds = s.first_token - s.admitted;
    r.generate_seconds = s.last_token - s.first_token;
  }
  const std::string error = s.error;
  s.busy = false;
  slot_freed_.notify_one();
  lock.unlock();
  if (!error.empty()) fail(error);
  return r;
}

void BatchedGenerator::finish(Slot& s) {
  if (s.reset) {  // ended before its first pass
    decoder_.truncate(s.keep, s.index);
    s.reset = false;
  }
  const int64_t pos = decoder_.pos(s.index);
  if (s.error.empty()) {
    s.cached.assign(s.history.begin(), s.history.begin() + std::min<int64_t>(pos, static_cast<int64_t>(s.history.size())));
  } else {
    s.cached.clear();  // what the failed pass left in the cache is unknown
    decoder_.truncate(0, s.index);
  }
  s.active = false;
  s.sampler.reset();
  s.ready.notify_all();
}

void BatchedGenerator::plan_pass(std::vector<BatchRow>& rows, std::vector<LogitRow>& logit_rows) {
  rows.clear();
  logit_rows.clear();
  const int64_t capacity = decoder_.max_batch();
  for (const auto& sp : slots_) {
    Slot& s = *sp;
    if (!s.active) continue;
    if (s.cancel) {
      finish(s);
      continue;
    }
    if (s.reset) {
      decoder_.truncate(s.keep, s.index);
      s.reset = false;
    }
    // A generating slot: its last sampled token (every such slot fits: the
    // decoder holds at least n_slots rows).
    if (s.has_pending) {
      rows.push_back({s.pending, s.index, true});
      logit_rows.push_back({s.index, -1});
      s.has_pending = false;
    }
  }
  // Prompts in the room left, in slot order, at most prompt_chunk_ rows while
  // other slots generate; a prompt's last row wants logits (every row, for
  // a request that wants the prompt's log-probabilities).
  const int64_t prompt_end =
      rows.empty() ? capacity : std::min(capacity, static_cast<int64_t>(rows.size()) + prompt_chunk_);
  for (const auto& sp : slots_) {
    Slot& s = *sp;
    if (!s.active || s.next_prompt >= s.n_prompt) continue;
    const int64_t take = std::min(s.n_prompt - s.next_prompt, prompt_end - static_cast<int64_t>(rows.size()));
    for (int64_t i = 0; i < take; ++i) {
      const bool last = s.next_prompt + 1 == s.n_prompt;
      rows.push_back({s.history[static_cast<size_t>(s.next_prompt)], s.index, last || s.prompt_logprobs});
      if (last || s.prompt_logprobs) logit_rows.push_back({s.index, last ? -1 : s.next_prompt});
      ++s.next_prompt;
    }
  }
}

void BatchedGenerator::take_token(Slot& s, SampledToken&& sampled) {
  const int32_t token = sampled.id;
  s.last_token = now_seconds();
  if (s.first_token == 0) s.first_token = s.last_token;
  if (s.cancel || s.sampled >= s.budget || tokenizer_.is_end_of_generation(token)) return finish(s);
  s.out.push_back(std::move(sampled));
  s.history.push_back(token);
  ++s.sampled;
  s.ready.notify_all();
  // The last token of the budget, or one past the context, is not evaluated.
  const bool context_end = decoder_.pos(s.index) >= model_.n_ctx();
  if (s.sampled >= s.budget || context_end) {
    s.context_full = context_end || s.budget_by_context;
    return finish(s);
  }
  s.pending = token;
  s.has_pending = true;
}

void BatchedGenerator::engine_loop() {
  const int64_t V = model_.config().n_vocab;
  std::vector<BatchRow> rows;
  std::vector<LogitRow> logit_rows;
  std::vector<SampledToken> tokens;
  std::vector<float> logits(static_cast<size_t>(n_slots() * V));
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    const auto any_active = [&] {
      return std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->active; });
    };
    work_.wait(lock, [&] { return stopping_ || (!paused_ && any_active()); });
    if (!any_active()) return;  // stopping, nothing left
    plan_pass(rows, logit_rows);
    if (rows.empty()) continue;  // every active slot was cancelled
    lock.unlock();
    std::string error;
    tokens.assign(logit_rows.size(), SampledToken{});
    // Room for every logits row: more than one per slot only when a request
    // wants its prompt's log-probabilities.
    if (logits.size() < logit_rows.size() * static_cast<size_t>(V)) logits.resize(logit_rows.size() * static_cast<size_t>(V));
    try {
      if (on_pass_) on_pass_(rows.data(), static_cast<int64_t>(rows.size()));
      decoder_.eval_rows(rows.data(), static_cast<int64_t>(rows.size()), logits.data());
      for (size_t k = 0; k < logit_rows.size(); ++k) {
        // The history and the sampler are the engine's while the slot is active.
        Slot& s = *slots_[static_cast<size_t>(logit_rows[k].slot)];
        const float* row = logits.data() + static_cast<int64_t>(k) * V;
        const int64_t p = logit_rows[k].prompt_pos;
        tokens[k].id = p >= 0 ? s.history[static_cast<size_t>(p + 1)] : s.sampler->sample(row, s.history);
        if (s.logprobs >= 0) fill_token_logprobs(row, V, s.logprobs, tokens[k]);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    ++passes_;
    rows_ += static_cast<int64_t>(rows.size());
    if (!error.empty()) {
      for (const auto& sp : slots_) {
        Slot& s = *sp;
        const bool in_pass = std::any_of(rows.begin(), rows.end(), [&](const BatchRow& r) { return r.seq == s.index; });
        if (s.active && in_pass) {
          s.error = error;
          finish(s);
        }
      }
      continue;
    }
    for (size_t k = 0; k < logit_rows.size(); ++k) {
      Slot& s = *slots_[static_cast<size_t>(logit_rows[k].slot)];
      if (logit_rows[k].prompt_pos >= 0) {
        if (s.active) s.prompt_lp.push_back(std::move(tokens[k]));
      } else {
        take_token(s, std::move(tokens[k]));
      }
    }
  }
}

}  // namespace lowbit
