// Several sequences in one decoder: rows of different sequences evaluated in
// one pass must give each sequence the logits it gets alone, and the batched
// generator must give each concurrent request the tokens generate_text gives
// it alone, in fewer passes over the weights than requests x tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "core/error.h"
#include "fixtures.h"
#include "model/decoder.h"
#include "model/model.h"
#include "runtime/batched_generator.h"
#include "runtime/dummy_model.h"
#include "runtime/generator.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"

namespace lowbit {
namespace {

class BatchedGeneration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pool_ = std::make_unique<ThreadPool>(2);
    const std::string path = testing::temp_path("batched-tiny.gguf");
    DummyModelOptions opt;
    opt.shape = "tiny";
    opt.seed = 11;
    write_dummy_model(opt, path, *pool_);
    LoadOptions lo;
    lo.n_ctx = 96;
    model_ = Model::load(path, lo, *pool_);
    tokenizer_ = Tokenizer::create(read_vocab_gguf(*model_->gguf()));
  }
  static void TearDownTestSuite() {
    tokenizer_.reset();
    model_.reset();
    pool_.reset();
  }

  static std::vector<int32_t> tokens(int64_t n, int32_t seed) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    const int32_t V = static_cast<int32_t>(model_->config().n_vocab);
    for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = (seed * 7919 + static_cast<int32_t>(i) * 104729) % V;
    return t;
  }

  static BatchedOptions options(int n_slots, int64_t max_batch = 64) {
    BatchedOptions o;
    o.n_slots = n_slots;
    o.max_batch = max_batch;
    return o;
  }

  // Greedy tokens generate_text gives the prompt alone (the reference).
  static std::vector<int32_t> alone(const std::vector<int32_t>& prompt, int64_t n) {
    Decoder d(*model_, *pool_);
    GenerateOptions g;
    g.n_predict = n;
    g.sampling.temperature = 0;
    return generate_text(d, *tokenizer_, prompt, g, [](std::string_view) {}).generated;
  }

  static inline std::unique_ptr<ThreadPool> pool_;
  static inline std::unique_ptr<Model> model_;
  static inline std::unique_ptr<Tokenizer> tokenizer_;
};

// Three sequences of different lengths, their prompts split over passes and
// mixed with the others' decode rows: every logits row is the one its
// sequence gets evaluated alone, one token at a time after its prompt.
TEST_F(BatchedGeneration, RowsOfSeveralSequencesGetTheLogitsEachGetsAlone) {
  const int64_t V = model_->config().n_vocab;
  const std::vector<std::vector<int32_t>> seqs = {tokens(7, 1), tokens(12, 2), tokens(3, 3)};
  // Reference: each sequence's logits at every position, alone.
  std::vector<std::vector<float>> want(seqs.size());
  for (size_t s = 0; s < seqs.size(); ++s) {
    Decoder d(*model_, *pool_);
    want[s].resize(seqs[s].size() * static_cast<size_t>(V));
    d.eval(seqs[s].data(), static_cast<int64_t>(seqs[s].size()), want[s].data(), /*all_logits=*/true);
  }
  // Batched: passes of up to 8 rows taking the sequences' tokens round-robin
  // in uneven runs (1, 2 or 3 tokens of a sequence at once).
  Decoder d(*model_, *pool_, 8, KvCacheType::F16, 3);
  std::vector<size_t> next(seqs.size(), 0);
  std::vector<float> logits(8 * static_cast<size_t>(V));
  int passes = 0;
  for (bool left = true; left; ++passes) {
    std::vector<BatchRow> rows;
    std::vector<std::pair<size_t, size_t>> at;  // (sequence, position) of each logits row
    for (size_t s = 0; s < seqs.size(); ++s) {
      const size_t run = 1 + (s + static_cast<size_t>(passes)) % 3;
      for (size_t i = 0; i < run && next[s] < seqs[s].size() && rows.size() < 8; ++i, ++next[s]) {
        rows.push_back({seqs[s][next[s]], static_cast<int32_t>(s), true});
        at.emplace_back(s, next[s]);
      }
    }
    d.eval_rows(rows.data(), static_cast<int64_t>(rows.size()), logits.data());
    for (size_t k = 0; k < at.size(); ++k) {
      const float* got = logits.data() + k * static_cast<size_t>(V);
      const float* ref = want[at[k].first].data() + at[k].second * static_cast<size_t>(V);
      float worst = 0, scale = 0;
      for (int64_t v = 0; v < V; ++v) {
        worst = std::max(worst, std::fabs(got[v] - ref[v]));
        scale = std::max(scale, std::fabs(ref[v]));
      }
      EXPECT_LE(worst, 1e-5f * scale) << "sequence " << at[k].first << " position " << at[k].second;
    }
    left = false;
    for (size_t s = 0; s < seqs.size(); ++s) left |= next[s] < seqs[s].size();
  }
  for (size_t s = 0; s < seqs.size(); ++s) EXPECT_EQ(d.pos(static_cast<int64_t>(s)), static_cast<int64_t>(seqs[s].size()));
  EXPECT_LT(passes, 22 / 2) << "rows of several sequences share passes";
}

// eval_rows throws an Error whose message holds `says`.
void expect_refused(Decoder& d, const BatchRow* rows, int64_t n, float* logits, const std::string& says) {
  try {
    d.eval_rows(rows, n, logits);
    ADD_FAILURE() << "accepted; expected an error saying: " << says;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST_F(BatchedGeneration, BadRowsAreRefusedAndChangeNothing) {
  Decoder d(*model_, *pool_, 4, KvCacheType::F16, 2);
  std::vector<float> logits(4 * static_cast<size_t>(model_->config().n_vocab));
  const BatchRow bad_seq[] = {{1, 0, false}, {2, 2, true}};
  expect_refused(d, bad_seq, 2, logits.data(), "no sequence 2");
  EXPECT_EQ(d.pos(0), 0);
  const BatchRow five[] = {{1, 0, false}, {1, 0, false}, {1, 0, false}, {1, 0, false}, {1, 1, true}};
  expect_refused(d, five, 5, logits.data(), "largest batch 4");
  // A sequence one token from the end of the context takes one row, not two.
  const std::vector<int32_t> fill = tokens(model_->n_ctx() - 1, 4);
  Decoder full(*model_, *pool_, 64, KvCacheType::F16, 2);
  full.eval(fill.data(), static_cast<int64_t>(fill.size()), logits.data());  // in chunks of 64
  const BatchRow two[] = {{5, 0, false}, {6, 0, true}};
  expect_refused(full, two, 2, logits.data(), "context overflow: sequence 0");
  EXPECT_EQ(full.pos(0), model_->n_ctx() - 1);
  EXPECT_NO_THROW(full.eval_rows(two, 1, logits.data()));
  EXPECT_EQ(full.pos(0), model_->n_ctx());
}

// Four requests at once on three slots: each gets the greedy tokens it gets
// alone; the requests share passes over the weights.
TEST_F(BatchedGeneration, ConcurrentRequestsGetWhatEachGetsAlone) {
  BatchedGenerator gen(*model_, *tokenizer_, *pool_, options(3, 16));
  const int kRequests = 4;
  const int64_t n = 10;
  std::vector<std::vector<int32_t>> prompts, want;
  for (int i = 0; i < kRequests; ++i) {
    prompts.push_back(tokens(3 + 11 * i, 20 + i));
    want.push_back(alone(prompts.back(), n));
  }
  std::vector<BatchedResult> got(kRequests);
  std::vector<std::vector<int32_t>> streamed(kRequests);
  // Held until three requests hold the slots, so they share their first pass
  // however the threads are scheduled (the fourth waits for a slot).
  gen.pause();
  std::vector<std::thread> clients;
  for (int i = 0; i < kRequests; ++i)
    clients.emplace_back([&, i] {
      BatchedRequest r;
      r.prompt = prompts[static_cast<size_t>(i)];
      r.n_predict = n;
      r.sampling.temperature = 0;
      got[static_cast<size_t>(i)] = gen.generate(r, [&](const SampledToken& t) {
        streamed[static_cast<size_t>(i)].push_back(t.id);
        return true;
      });
    });
  for (int ms = 0; gen.busy_slots() < 3 && ms < 10000; ++ms) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(gen.busy_slots(), 3);
  EXPECT_EQ(gen.passes(), 0);
  gen.resume();
  for (auto& c : clients) c.join();
  int64_t tokens_out = 0;
  for (int i = 0; i < kRequests; ++i) {
    const auto u = static_cast<size_t>(i);
    EXPECT_EQ(got[u].generated, want[u]) << "request " << i;
    EXPECT_EQ(streamed[u], want[u]) << "request " << i;
    tokens_out += static_cast<int64_t>(want[u].size());
  }
  // Alone, the requests take a pass per generated token (the last sampled
  // token is not evaluated) plus their prompts' passes: batched, fewer.
  const int64_t rows = gen.rows_evaluated(), passes = gen.passes();
  EXPECT_GT(rows, tokens_out);  // prompts and tokens
  EXPECT_LT(passes, tokens_out) << rows << " rows in " << passes << " passes";
}

// A long prompt arriving while another request generates is taken
// prompt_chunk rows a pass, so the generating request's tokens keep coming;
// arriving alone, it takes one pass. Both get what they get alone.
TEST_F(BatchedGeneration, LongPromptTakesChunksWhileOthersGenerate) {
  BatchedOptions o = options(2);
  o.prompt_chunk = 4;
  std::vector<std::vector<BatchRow>> passes;  // written by the engine thread
  std::atomic<bool> first_pass{false};
  BatchedGenerator* gen_ptr = nullptr;
  o.on_pass = [&](const BatchRow* rows, int64_t n) {
    passes.emplace_back(rows, rows + n);
    if (passes.size() != 1) return;
    // The first request's prompt is planned: hold the engine until the second
    // request holds its slot, so its prompt arrives while the first generates.
    first_pass = true;
    for (int ms = 0; gen_ptr->busy_slots() < 2 && ms < 10000; ++ms)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  BatchedGenerator gen(*model_, *tokenizer_, *pool_, o);
  gen_ptr = &gen;
  BatchedRequest a, b;
  a.prompt = tokens(3, 60);
  a.n_predict = 40;
  b.prompt = tokens(41, 61);
  b.n_predict = 5;
  a.sampling.temperature = b.sampling.temperature = 0;
  BatchedResult got_a, got_b;
  std::thread client_a([&] { got_a = gen.generate(a, [](const SampledToken&) { return true; }); });
  for (int ms = 0; !first_pass && ms < 10000; ++ms) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread client_b([&] { got_b = gen.generate(b, [](const SampledToken&) { return true; }); });
  client_a.join();
  client_b.join();
  EXPECT_EQ(got_a.generated, alone(a.prompt, a.n_predict));
  EXPECT_EQ(got_b.generated, alone(b.prompt, b.n_predict));
  ASSERT_NE(got_a.slot, got_b.slot);
  // Every pass carrying b's prompt also carried a's next token (a generates
  // 40 tokens, b's prompt takes 41 / 4 passes), and at most 4 prompt rows.
  int64_t prompt_rows = 0, prompt_passes = 0;
  for (size_t p = 1; p < passes.size(); ++p) {
    int64_t of_a = 0, of_b = 0;
    for (const BatchRow& r : passes[p]) (r.seq == got_a.slot ? of_a : of_b) += 1;
    if (prompt_rows >= static_cast<int64_t>(b.prompt.size())) break;  // b's prompt is done
    EXPECT_EQ(of_a, 1) << "pass " << p;
    EXPECT_LE(of_b, 4) << "pass " << p;
    prompt_rows += of_b;
    prompt_passes += of_b > 0;
  }
  EXPECT_EQ(prompt_rows, static_cast<int64_t>(b.prompt.size()));
  EXPECT_GE(prompt_passes, 11);
  // Alone, a prompt of 41 rows is one pass.
  const size_t before = passes.size();
  BatchedRequest c = b;
  c.prompt = tokens(41, 62);
  gen.generate(c, [](const SampledToken&) { return true; });
  ASSERT_GT(passes.size(), before);
  EXPECT_EQ(passes[before].size(), c.prompt.size());
}

// A request whose prompt begins with a finished request's prompt and reply
// evaluates only the rest, and gets what it gets alone.
TEST_F(BatchedGeneration, NextTurnReusesItsSlotsCache) {
  BatchedGenerator gen(*model_, *tokenizer_, *pool_, options(2));
  BatchedRequest r;
  r.prompt = tokens(9, 40);
  r.n_predict = 6;
  r.sampling.temperature = 0;
  const BatchedResult first = gen.generate(r, [](const SampledToken&) { return true; });
  EXPECT_EQ(first.cached, 0);
  BatchedRequest other = r;
  other.prompt = tokens(5, 41);
  const BatchedResult unrelated = gen.generate(other, [](const SampledToken&) { return true; });
  EXPECT_NE(unrelated.slot, first.slot) << "the free slot unused longest";
  BatchedRequest next = r;
  next.prompt.insert(next.prompt.end(), first.generated.begin(), first.generated.end());
  const std::vector<int32_t> more = tokens(4, 42);
  next.prompt.insert(next.prompt.end(), more.begin(), more.end());
  const BatchedResult second = gen.generate(next, [](const SampledToken&) { return true; });
  EXPECT_EQ(second.slot, first.slot);
  // The first prompt and the reply's evaluated tokens (all but the last).
  EXPECT_EQ(second.cached, 9 + 6 - 1);
  EXPECT_EQ(second.generated, alone(next.prompt, 6));
}

// on_token returning false ends a request at once; one that throws frees its
// slot and its error reaches the caller; the generator goes on.
TEST_F(BatchedGeneration, StoppedAndFailedRequestsFreeTheirSlots) {
  BatchedGenerator gen(*model_, *tokenizer_, *pool_, options(1));
  BatchedRequest r;
  r.prompt = tokens(4, 50);
  r.n_predict = 30;
  r.sampling.temperature = 0;
  int seen = 0;
  const BatchedResult stopped = gen.generate(r, [&](const SampledToken&) { return ++seen < 3; });
  EXPECT_EQ(stopped.generated.size(), 3u);
  EXPECT_EQ(seen, 3);
  EXPECT_THROW(gen.generate(r, [](const SampledToken&) -> bool { throw Error("client gone"); }), Error);
  BatchedRequest bad = r;
  bad.prompt.push_back(static_cast<int32_t>(model_->config().n_vocab));
  EXPECT_THROW(gen.generate(bad, [](const SampledToken&) { return true; }), Error);
  bad.prompt = tokens(model_->n_ctx(), 51);
  EXPECT_THROW(gen.generate(bad, [](const SampledToken&) { return true; }), Error);
  r.n_predict = 5;
  EXPECT_EQ(gen.generate(r, [](const SampledToken&) { return true; }).generated, alone(r.prompt, 5));
}

// n_predict < 0 fills the context: the request ends there and says so.
TEST_F(BatchedGeneration, RequestEndsAtTheContext) {
  BatchedGenerator gen(*model_, *tokenizer_, *pool_, options(2));
  BatchedRequest r;
  r.prompt = tokens(model_->n_ctx() - 5, 60);
  r.n_predict = -1;
  r.sampling.temperature = 0;
  const BatchedResult res = gen.generate(r, [](const SampledToken&) { return true; });
  EXPECT_EQ(res.generated, alone(r.prompt, -1));
  ASSERT_EQ(res.generated.size(), 5u) << "an end token came first: pick another prompt";
  EXPECT_TRUE(res.context_full);
  r.n_predict = 3;
  const BatchedResult shorter = gen.generate(r, [](const SampledToken&) { return true; });
  EXPECT_EQ(shorter.generated.size(), 3u);
  EXPECT_FALSE(shorter.context_full);
  EXPECT_EQ(shorter.cached, r.prompt.size() - 1) << "the slot held the prompt";
}

// Asked for logprobs, each token comes with the log-softmax of the logits its
// sequence gets alone: greedy picks the most likely, the alternatives are in
// order, and the probabilities are a distribution's.
TEST_F(BatchedGeneration, LogprobsAreTheModelsDistribution) {
  const int64_t V = model_->config().n_vocab;
  BatchedGenerator gen(*model_, *tokenizer_, *pool_, options(2));
  BatchedRequest r;
  r.prompt = tokens(6, 70);
  r.n_predict = 6;
  r.sampling.temperature = 0;
  r.logprobs = 4;
  std::vector<SampledToken> got;
  gen.generate(r, [&](const SampledToken& t) {
    got.push_back(t);
    return true;
  });
  ASSERT_EQ(got.size(), 6u) << "an end token came first: pick another prompt";
  // Reference: the logits of prompt + tokens, alone, every position.
  std::vector<int32_t> seq = r.prompt;
  for (const SampledToken& t : got) seq.push_back(t.id);
  Decoder d(*model_, *pool_);
  std::vector<float> logits(seq.size() * static_cast<size_t>(V));
  d.eval(seq.data(), static_cast<int64_t>(seq.size()), logits.data(), /*all_logits=*/true);
  for (size_t i = 0; i < got.size(); ++i) {
    const SampledToken& t = got[i];
    ASSERT_TRUE(t.has_logprobs);
    ASSERT_EQ(t.top.size(), 4u);
    EXPECT_EQ(t.top[0].id, t.id) << "greedy takes the most likely";
    EXPECT_EQ(t.top[0].logprob, t.logprob);
    const float* row = logits.data() + (r.prompt.size() - 1 + i) * static_cast<size_t>(V);
    double z = 0;
    for (int64_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(row[v]));
    for (size_t k = 0; k < t.top.size(); ++k) {
      if (k > 0) {
        EXPECT_GE(t.top[k - 1].logprob, t.top[k].logprob);
      }
      EXPECT_LE(t.top[k].logprob, 0.0f);
      EXPECT_NEAR(t.top[k].logprob, row[t.top[k].id] - std::log(z), 1e-4) << "token " << i << " alternative " << k;
    }
    // Nothing outside the top 4 is likelier than its last.
    int64_t likelier = 0;
    for (int64_t v = 0; v < V; ++v) likelier += row[v] > row[t.top.back().id];
    EXPECT_EQ(likelier, 3);
  }
  r.logprobs = -1;
  gen.generate(r, [&](const SampledToken& t) {
    EXPECT_FALSE(t.has_logprobs);
    EXPECT_TRUE(t.top.empty());
    return true;
  });
}

// echo with logprobs: every prompt token after the first gets the
// log-probability the position before it gives it, also when the slot holds
// the prompt already (its cache is not reused), and beside another request.
TEST_F(BatchedGeneration, PromptLogprobsScoreEveryPromptToken) {
  const int64_t V = model_->config().n_vocab;
  BatchedGenerator gen(*model_, *tokenizer_, *pool_, options(2, 8));
  BatchedRequest r;
  r.prompt = tokens(21, 80);  // over two passes of 8 rows
  r.n_predict = 1;
  r.sampling.temperature = 0;
  r.logprobs = 2;
  r.prompt_logprobs = true;
  std::vector<float> logits(r.prompt.size() * static_cast<size_t>(V));
  Decoder d(*model_, *pool_);
  d.eval(r.prompt.data(), static_cast<int64_t>(r.prompt.size()), logits.data(), /*all_logits=*/true);
  BatchedRequest other;
  other.prompt = tokens(5, 81);
  other.n_predict = 12;
  other.sampling.temperature = 0;
  for (int round = 0; round < 2; ++round) {
    gen.pause();
    BatchedResult res, beside;
    std::thread a([&] { res = gen.generate(r, [](const SampledToken&) { return true; }); });
    std::thread b([&] { beside = gen.generate(other, [](const SampledToken&) { return true; }); });
    for (int ms = 0; gen.busy_slots() < 2 && ms < 10000; ++ms) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    gen.resume();
    a.join();
    b.join();
    EXPECT_EQ(res.cached, 0) << "round " << round;
    EXPECT_EQ(beside.generated, alone(other.prompt, 12));
    ASSERT_EQ(res.prompt_logprobs.size(), r.prompt.size() - 1);
    for (size_t i = 0; i + 1 < r.prompt.size(); ++i) {
      const SampledToken& t = res.prompt_logprobs[i];
      EXPECT_EQ(t.id, r.prompt[i + 1]);
      ASSERT_EQ(t.top.size(), 2u);
      const float* row = logits.data() + i * static_cast<size_t>(V);
      double z = 0;
      for (int64_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(row[v]));
      EXPECT_NEAR(t.logprob, row[t.id] - std::log(z), 1e-4) << "prompt token " << i + 1;
      EXPECT_EQ(t.top[0].id, argmax(row, V));
    }
  }
}

}  // namespace
}  // namespace lowbit
