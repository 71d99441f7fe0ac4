// The perplexity arithmetic on inputs whose answers are known by hand.
#include "runtime/perplexity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/rng.h"
#include "core/thread_pool.h"

namespace lowbit {
namespace {

TEST(TokenNll, UniformDistributionGivesPerplexityEqualToVocabularySize) {
  const std::vector<float> logits(512, 3.25f);
  NllStats stats;
  for (int32_t t : {0, 17, 511, 256}) stats.add(token_nll(logits.data(), 512, t));
  EXPECT_NEAR(stats.mean(), std::log(512.0), 1e-12);
  EXPECT_NEAR(stats.perplexity(), 512.0, 1e-9);
  EXPECT_EQ(stats.perplexity_error(), 0.0);  // every token equally surprising: no spread
}

TEST(TokenNll, KnownTwoTokenDistribution) {
  // p = (0.75, 0.25); the text is 0 0 0 1.
  const float logits[2] = {std::log(0.75f) + 5.0f, std::log(0.25f) + 5.0f};  // shifted: softmax ignores it
  NllStats stats;
  for (int32_t t : {0, 0, 0, 1}) stats.add(token_nll(logits, 2, t));
  EXPECT_NEAR(stats.perplexity(), std::pow(0.75 * 0.75 * 0.75 * 0.25, -0.25), 1e-6);
  // By hand: NLLs a = -ln .75 (x3), b = -ln .25; population variance v;
  // error = ppl * sqrt(v / 3) = 0.481951694...
  EXPECT_NEAR(stats.perplexity_error(), 0.48195169447545366, 1e-6);
}

TEST(TokenNll, ExtremeLogitsStayFinite) {
  const float logits[3] = {1e4f, -1e4f, 0.0f};
  EXPECT_NEAR(token_nll(logits, 3, 0), 0.0, 1e-12);
  EXPECT_NEAR(token_nll(logits, 3, 2), 1e4, 1e-3);
  EXPECT_THROW(token_nll(logits, 3, 3), Error);
  EXPECT_THROW(token_nll(logits, 3, -1), Error);
}

TEST(PerplexityPlan, ChunksLikeLlamaCpp) {
  const PerplexityPlan p = plan_perplexity(1000, 128, 0);
  EXPECT_EQ(p.n_chunks, 7);  // 1000 / 128, the rest dropped
  EXPECT_EQ(p.first, 64);
  EXPECT_EQ(p.scored_per_chunk(), 63);  // positions 64 .. 126
  EXPECT_EQ(plan_perplexity(1000, 128, 3).n_chunks, 3);
  EXPECT_EQ(plan_perplexity(1000, 128, 50).n_chunks, 7);
  EXPECT_EQ(plan_perplexity(7, 7, 0).first, 3);
}

TEST(PerplexityPlan, TooFewTokensNamesTheLimit) {
  try {
    plan_perplexity(100, 128, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("128"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("100"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_perplexity(100, 3, 0), Error);
}

TEST(PerplexityPlan, ChunkInputReplacesOnlyTheFirstTokenWithBos) {
  std::vector<int32_t> tokens(20);
  for (int32_t i = 0; i < 20; ++i) tokens[i] = 100 + i;
  const PerplexityPlan p = plan_perplexity(20, 8, 0);
  EXPECT_EQ(chunk_input(tokens, p, 1, 1), (std::vector<int32_t>{1, 109, 110, 111, 112, 113, 114, 115}));
  EXPECT_EQ(chunk_input(tokens, p, 0, -1), (std::vector<int32_t>{100, 101, 102, 103, 104, 105, 106, 107}));
  EXPECT_EQ(tokens[8], 108);  // the text itself is untouched
}

TEST(ScoreChunk, ScoresExactlyTheSecondHalfAgainstTheNextToken) {
  // n_ctx 8: positions 4, 5, 6 are scored (predicting tokens 5, 6, 7); the
  // other rows are NaN, so scoring one of them would poison the result.
  const int64_t V = 4, n_ctx = 8;
  const PerplexityPlan p = plan_perplexity(8, n_ctx, 0);
  const int32_t tokens[8] = {0, 1, 2, 3, 0, 3, 1, 2};
  std::vector<float> logits(n_ctx * V, std::numeric_limits<float>::quiet_NaN());
  for (int64_t j = 4; j <= 6; ++j) {
    // The next token gets weight 3 among 3 others of weight 1: p = 1/2.
    for (int64_t v = 0; v < V; ++v) logits[j * V + v] = v == tokens[j + 1] ? std::log(3.0f) : 0.0f;
  }
  NllStats stats;
  score_chunk(logits.data(), tokens, p, V, stats);
  EXPECT_EQ(stats.count(), 3);
  EXPECT_NEAR(stats.perplexity(), 2.0, 1e-6);
}

TEST(ScoreChunk, ANanOrInfiniteLogitInAScoredRowIsAnErrorNamingTheToken) {
  const int64_t V = 4, n_ctx = 8;
  const PerplexityPlan p = plan_perplexity(8, n_ctx, 0);
  const int32_t tokens[8] = {0, 1, 2, 3, 0, 3, 1, 2};
  std::vector<float> logits(n_ctx * V, 0.0f);
  // Row 5 is scored; token 2 is not its target, so only the check sees it.
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), INFINITY}) {
    logits[5 * V + 2] = bad;
    NllStats stats;
    try {
      score_chunk(logits.data(), tokens, p, V, stats);
      ADD_FAILURE() << "scored a logit of " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("logit of token 2 is"), std::string::npos) << e.what();
    }
  }
}

TEST(ScoreChunk, OnThePoolGivesTheSerialSums) {
  const int64_t V = 1000, n_ctx = 64;
  const PerplexityPlan p = plan_perplexity(n_ctx, n_ctx, 0);
  Rng rng(9);
  std::vector<int32_t> tokens(n_ctx);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(V));
  std::vector<float> logits(static_cast<size_t>(n_ctx * V));
  for (auto& v : logits) v = static_cast<float>(rng.normal()) * 4.0f;
  NllStats serial, pooled;
  score_chunk(logits.data(), tokens.data(), p, V, serial);
  ThreadPool pool(2);
  score_chunk(logits.data(), tokens.data(), p, V, pooled, &pool);
  EXPECT_EQ(pooled.count(), n_ctx / 2 - 1);
  EXPECT_EQ(pooled.mean(), serial.mean());
  EXPECT_EQ(pooled.perplexity_error(), serial.perplexity_error());
  // A token outside the vocabulary fails from the pool's threads too.
  tokens[n_ctx - 1] = static_cast<int32_t>(V);
  EXPECT_THROW(score_chunk(logits.data(), tokens.data(), p, V, pooled, &pool), Error);
}

TEST(NllStats, ErrorMatchesTheStandardErrorOfTheMean) {
  Rng rng(5);
  NllStats stats;
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) {
    v.push_back(3.0 * rng.uniform());
    stats.add(v.back());
  }
  double mean = 0;
  for (double x : v) mean += x / 1000;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  const double sample_sd = std::sqrt(ss / 999);
  // llama.cpp: sqrt(population variance / (n - 1)) = sample sd / sqrt(n).
  EXPECT_NEAR(stats.perplexity_error(), std::exp(mean) * sample_sd / std::sqrt(1000.0), 1e-9);
}

}  // namespace
}  // namespace lowbit
