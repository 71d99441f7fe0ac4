// The sampler's stages on logits small enough to reason about: greedy, the
// penalties on recent tokens (repetition, presence, frequency) and their
// window, top-k, top-p and min-p cut-offs, the draw's distribution and its
// seed; and the log-probabilities reported for sampled tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "runtime/sampler.h"
#include "runtime/token_logprobs.h"

namespace lowbit {
namespace {

SamplerParams greedy() {
  SamplerParams p;
  p.temperature = 0;
  return p;
}

// Plain draws: no cut-offs, temperature 1.
SamplerParams plain(uint64_t seed) {
  SamplerParams p;
  p.temperature = 1;
  p.top_k = 0;
  p.top_p = 1;
  p.min_p = 0;
  p.seed = seed;
  return p;
}

// How often each token is drawn in n draws.
std::vector<double> frequencies(const SamplerParams& p, const std::vector<float>& logits, int n) {
  Sampler s(p, static_cast<int64_t>(logits.size()));
  std::vector<double> f(logits.size(), 0);
  for (int i = 0; i < n; ++i) f[static_cast<size_t>(s.sample(logits.data(), {}))] += 1.0 / n;
  return f;
}

TEST(Sampler, GreedyTakesTheFirstLargest) {
  const std::vector<float> l = {0.5f, 2.0f, -1.0f, 2.0f};
  Sampler s(greedy(), 4);
  EXPECT_EQ(s.sample(l.data(), {}), 1);
  EXPECT_EQ(argmax(l.data(), 4), 1);
  SamplerParams k1 = plain(1);
  k1.top_k = 1;  // top-k 1 is greedy at any temperature
  Sampler t(k1, 4);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(t.sample(l.data(), {}), 1);
}

// A NaN orders nothing and a +inf makes every probability NaN: both are
// refused, naming the token, greedy or drawn. -inf is a logit never drawn.
TEST(Sampler, RefusesNanAndPositiveInfinityNamingTheToken) {
  for (float bad : {NAN, INFINITY}) {
    const std::vector<float> logits = {0.5f, 1.0f, bad, 2.0f};
    for (const SamplerParams& p : {greedy(), plain(3)}) {
      Sampler s(p, 4);
      try {
        s.sample(logits.data(), {});
        ADD_FAILURE() << "sampled from a logit of " << bad;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("logit of token 2 is"), std::string::npos) << e.what();
      }
    }
  }
  const std::vector<float> logits = {0.5f, -INFINITY, 1.0f};
  EXPECT_EQ(Sampler(greedy(), 3).sample(logits.data(), {}), 2);
  const std::vector<double> f = frequencies(plain(5), logits, 2000);
  EXPECT_EQ(f[1], 0.0);
  EXPECT_GT(f[0], 0.2);
}

TEST(TokenLogprobs, RefuseNanAndPositiveInfinityNamingTheToken) {
  const std::vector<float> logits = {0.5f, 1.0f, NAN, 2.0f};
  SampledToken t;
  t.id = 1;
  try {
    fill_token_logprobs(logits.data(), 4, 2, t);
    ADD_FAILURE() << "log-probabilities from a NaN logit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("logprobs: the logit of token 2 is"), std::string::npos) << e.what();
  }
}

TEST(Sampler, PenaltiesLowerRecentTokens) {
  const std::vector<float> l = {2.0f, 1.5f, -3.0f};
  const std::vector<int32_t> once = {0}, thrice = {0, 0, 0};
  auto pick = [&](SamplerParams p, const std::vector<int32_t>& history) {
    Sampler s(p, 3);
    return s.sample(l.data(), history);
  };
  SamplerParams p = greedy();
  EXPECT_EQ(pick(p, thrice), 0) << "no penalty";
  p.repeat_penalty = 1.5f;  // 2.0 / 1.5 < 1.5
  EXPECT_EQ(pick(p, once), 1);
  EXPECT_EQ(pick(p, thrice), 1) << "each distinct token once";
  p.repeat_penalty = 1.2f;  // 2.0 / 1.2 > 1.5, however often it occurred
  EXPECT_EQ(pick(p, thrice), 0);

  p = greedy();
  p.presence_penalty = 0.6f;  // 2.0 - 0.6 < 1.5
  EXPECT_EQ(pick(p, once), 1);
  p.presence_penalty = 0.4f;
  EXPECT_EQ(pick(p, thrice), 0) << "presence counts once";

  p = greedy();
  p.frequency_penalty = 0.2f;  // 2.0 - 0.2 > 1.5; 2.0 - 3 x 0.2 < 1.5
  EXPECT_EQ(pick(p, once), 0);
  EXPECT_EQ(pick(p, thrice), 1);

  // A negative logit is multiplied by the repetition penalty: lower still.
  const std::vector<float> neg = {-1.0f, -1.2f};
  SamplerParams r = greedy();
  r.repeat_penalty = 1.5f;
  Sampler s(r, 2);
  const std::vector<int32_t> h = {0};
  EXPECT_EQ(s.sample(neg.data(), h), 1);
}

TEST(Sampler, PenaltiesLookOnlyAtTheWindow) {
  const std::vector<float> l = {2.0f, 1.5f, 0.0f};
  const std::vector<int32_t> history = {0, 2, 2};
  SamplerParams p = greedy();
  p.presence_penalty = 1.0f;
  p.repeat_last_n = 2;  // sees {2, 2}: token 0 is not penalised
  Sampler a(p, 3);
  EXPECT_EQ(a.sample(l.data(), history), 0);
  p.repeat_last_n = 3;
  Sampler b(p, 3);
  EXPECT_EQ(b.sample(l.data(), history), 1);
  p.repeat_last_n = 0;  // off
  Sampler c(p, 3);
  EXPECT_EQ(c.sample(l.data(), history), 0);
  p.repeat_last_n = -1;  // all of it
  Sampler d(p, 3);
  EXPECT_EQ(d.sample(l.data(), history), 1);
  // Out-of-vocabulary ids in the history are ignored, not indexed.
  const std::vector<int32_t> odd = {-5, 7, 0};
  Sampler e(p, 3);
  EXPECT_EQ(e.sample(l.data(), odd), 1);
}

TEST(Sampler, DrawsFollowTheDistribution) {
  const std::vector<float> l = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  const std::vector<double> f = frequencies(plain(7), l, 20000);
  EXPECT_NEAR(f[0], 0.5, 0.02);
  EXPECT_NEAR(f[1], 0.3, 0.02);
  EXPECT_NEAR(f[2], 0.2, 0.02);
  // Temperature 0.5 squares the odds: 25 : 9 : 4.
  SamplerParams cold = plain(8);
  cold.temperature = 0.5f;
  const std::vector<double> c = frequencies(cold, l, 20000);
  EXPECT_NEAR(c[0], 25.0 / 38, 0.02);
  EXPECT_NEAR(c[2], 4.0 / 38, 0.02);
}

TEST(Sampler, CutOffsDropTheUnlikely) {
  const std::vector<float> l = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  SamplerParams p = plain(9);
  p.top_p = 0.6f;  // 0.5 < 0.6 <= 0.5 + 0.3: tokens 0 and 1 stay
  std::vector<double> f = frequencies(p, l, 4000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[0], 0.5 / 0.8, 0.03);
  p = plain(10);
  p.min_p = 0.5f;  // p >= 0.25 stays
  f = frequencies(p, l, 4000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_GT(f[1], 0.2);
  p = plain(11);
  p.top_k = 2;
  f = frequencies(p, l, 4000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_GT(f[1], 0.2);
}

TEST(Sampler, TheSeedDecidesTheDraws) {
  std::vector<float> l(50);
  for (size_t i = 0; i < l.size(); ++i) l[i] = std::sin(static_cast<float>(i));
  auto draws = [&](uint64_t seed) {
    Sampler s(plain(seed), 50);
    std::vector<int32_t> d;
    for (int i = 0; i < 64; ++i) d.push_back(s.sample(l.data(), {}));
    return d;
  };
  EXPECT_EQ(draws(3), draws(3));
  EXPECT_NE(draws(3), draws(4));
}

// The stages as written down, on a whole sorted vocabulary: top-k, the
// softmax at temperature 1 for top-p then min-p, the tempered softmax of what
// is left, one uniform draw walked down the sorted candidates.
std::vector<int32_t> sorted_ids(const std::vector<float>& logits) {
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  return ids;
}
int32_t full_sort_draw(const std::vector<float>& logits, std::vector<int32_t> ids, const SamplerParams& p, Rng& rng) {
  if (p.top_k > 0 && static_cast<size_t>(p.top_k) < ids.size()) ids.resize(static_cast<size_t>(p.top_k));
  const auto softmax = [&](float t) {
    std::vector<float> pr(ids.size());
    double sum = 0;
    for (size_t i = 0; i < ids.size(); ++i) sum += pr[i] = std::exp((logits[ids[i]] - logits[ids[0]]) / t);
    for (auto& v : pr) v = static_cast<float>(v / sum);
    return pr;
  };
  std::vector<float> pr = softmax(1.0f);
  if (p.top_p < 1.0f) {
    double cum = 0;
    size_t n = 0;
    while (n < ids.size()) {
      cum += pr[n++];
      if (cum >= p.top_p) break;
    }
    ids.resize(n), pr.resize(n);
  }
  if (p.min_p > 0) {
    size_t n = 1;
    while (n < ids.size() && pr[n] >= p.min_p * pr[0]) ++n;
    ids.resize(n);
  }
  pr = softmax(p.temperature);
  const double r = rng.uniform();
  double cum = 0;
  for (size_t i = 0; i < ids.size(); ++i)
    if (r < (cum += pr[i])) return ids[i];
  return ids.back();
}

// The sampler sorts only as far as its cut-offs and draw reach; its draws
// are the whole-vocabulary ones' (a vocabulary of 6000 with ties, every
// combination of the cut-offs, 100 draws each).
TEST(Sampler, DrawsAsIfTheWholeVocabularyWereSorted) {
  Rng values(5);
  std::vector<float> logits(6000);
  for (auto& v : logits) v = static_cast<float>(values.normal()) * 3.0f;
  for (size_t i = 0; i < logits.size(); i += 97) logits[i] = logits[i / 2];  // ties
  const std::vector<int32_t> ids = sorted_ids(logits);
  for (int32_t top_k : {0, 40, 1000, 30000})
    for (float top_p : {1.0f, 0.95f, 0.5f, 0.01f})
      for (float min_p : {0.0f, 0.05f, 0.5f})
        for (float temperature : {0.7f, 1.0f, 2.5f}) {
          SamplerParams p;
          p.top_k = top_k, p.top_p = top_p, p.min_p = min_p, p.temperature = temperature, p.seed = 77;
          Sampler s(p, static_cast<int64_t>(logits.size()));
          Rng rng(77);
          for (int i = 0; i < 100; ++i)
            ASSERT_EQ(s.sample(logits.data(), {}), full_sort_draw(logits, ids, p, rng))
                << "draw " << i << ", top-k " << top_k << ", top-p " << top_p << ", min-p " << min_p << ", temperature "
                << temperature;
        }
}

// The same with penalties: the draws are those of the whole vocabulary sorted
// after the recent tokens' logits were penalised (llama.cpp's formulas),
// greedy included, with a history of repeats, ids beyond the window and an
// id outside the vocabulary.
TEST(Sampler, DrawsWithPenaltiesAsIfTheWholePenalisedVocabularyWereSorted) {
  Rng values(8);
  std::vector<float> logits(3000);
  for (auto& v : logits) v = static_cast<float>(values.normal()) * 3.0f;
  for (size_t i = 0; i < logits.size(); i += 89) logits[i] = logits[i / 3];  // ties
  std::vector<int32_t> history;
  for (int i = 0; i < 120; ++i) history.push_back(static_cast<int32_t>(values.below(40)) * 71);  // repeats
  history.push_back(5000);  // outside the vocabulary: ignored
  for (int32_t last_n : {-1, 64})
    for (float repeat : {1.0f, 1.3f, 0.8f})
      for (float presence : {0.0f, 0.5f})
        for (int32_t top_k : {0, 40, 500})
          for (float temperature : {0.0f, 0.9f}) {
            SamplerParams p;
            p.top_k = top_k, p.top_p = 0.9f, p.min_p = 0.02f, p.temperature = temperature, p.seed = 5;
            p.repeat_penalty = repeat, p.presence_penalty = presence, p.frequency_penalty = 0.1f;
            p.repeat_last_n = last_n;
            std::vector<float> penalised = logits;
            const size_t window = last_n < 0 ? history.size() : static_cast<size_t>(last_n);
            std::map<int32_t, int> count;
            for (size_t i = history.size() - window; i < history.size(); ++i) ++count[history[i]];
            for (const auto& [id, c] : count) {
              if (id >= static_cast<int32_t>(logits.size())) continue;
              float& l = penalised[static_cast<size_t>(id)];
              l = l > 0 ? l / repeat : l * repeat;
              l -= static_cast<float>(c) * p.frequency_penalty + presence;
            }
            const std::vector<int32_t> ids = sorted_ids(penalised);
            Sampler s(p, static_cast<int64_t>(logits.size()));
            Rng rng(5);
            for (int i = 0; i < 40; ++i) {
              const int32_t want = temperature <= 0 ? ids[0] : full_sort_draw(penalised, ids, p, rng);
              ASSERT_EQ(s.sample(logits.data(), history), want)
                  << "draw " << i << ", last-n " << last_n << ", repeat " << repeat << ", presence " << presence
                  << ", top-k " << top_k << ", temperature " << temperature;
            }
          }
}

TEST(Sampler, BadParametersAreRefused) {
  SamplerParams p = plain(1);
  p.top_p = 0;
  EXPECT_THROW(Sampler(p, 4), Error);
  p = plain(1);
  p.repeat_penalty = 0;
  EXPECT_THROW(Sampler(p, 4), Error);
  EXPECT_THROW(Sampler(plain(1), 0), Error);
}

TEST(TokenLogprobs, AreTheLogSoftmaxAndItsBest) {
  // Logits far beyond exp's range: the sum runs from the maximum.
  const std::vector<float> l = {1000.0f, 999.0f, 1000.0f, -1e30f, 998.0f};
  SampledToken t;
  t.id = 1;
  fill_token_logprobs(l.data(), 5, 3, t);
  const double z = std::log(2 + std::exp(-1.0) + std::exp(-2.0));  // relative to 1000
  EXPECT_TRUE(t.has_logprobs);
  EXPECT_NEAR(t.logprob, -1.0 - z, 1e-5);
  ASSERT_EQ(t.top.size(), 3u);
  EXPECT_EQ(t.top[0].id, 0) << "ties: the lower id first";
  EXPECT_EQ(t.top[1].id, 2);
  EXPECT_EQ(t.top[2].id, 1);
  EXPECT_NEAR(t.top[0].logprob, -z, 1e-5);
  // More alternatives than the vocabulary: all of it, in order.
  fill_token_logprobs(l.data(), 5, 9, t);
  ASSERT_EQ(t.top.size(), 5u);
  EXPECT_EQ(t.top[3].id, 4);
  EXPECT_EQ(t.top[4].id, 3);
  double sum = 0;
  for (const TokenLogprob& e : t.top) sum += std::exp(static_cast<double>(e.logprob));
  EXPECT_NEAR(sum, 1.0, 1e-6);
  fill_token_logprobs(l.data(), 5, 0, t);
  EXPECT_TRUE(t.top.empty());
  t.id = 5;
  EXPECT_THROW(fill_token_logprobs(l.data(), 5, 1, t), Error);
}

}  // namespace
}  // namespace lowbit
