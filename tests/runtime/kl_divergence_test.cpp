// KL divergence, the comparison statistics and the log-probability file, on
// pairs whose answers are known by hand.
#include "runtime/kl_divergence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "core/rng.h"
#include "fixtures.h"
#include "runtime/logprob_file.h"

namespace lowbit {
namespace {

std::vector<double> logs(std::initializer_list<double> p) {
  std::vector<double> v;
  for (double x : p) v.push_back(std::log(x));
  return v;
}

std::vector<float> random_logits(Rng& rng, int64_t n, float spread) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = spread * (2.0f * rng.uniform_f() - 1.0f);
  return v;
}

TEST(KlDivergence, IdenticalDistributionsGiveZero) {
  const auto p = logs({0.1, 0.2, 0.3, 0.4});
  EXPECT_EQ(kl_divergence(p.data(), p.data(), 4), 0.0);
}

TEST(KlDivergence, KnownPairs) {
  // KL((1/2, 1/2) || (1/4, 3/4)) = 1/2 ln 2 + 1/2 ln(2/3) = 1/2 ln(4/3).
  const auto p = logs({0.5, 0.5}), q = logs({0.25, 0.75});
  EXPECT_NEAR(kl_divergence(p.data(), q.data(), 2), 0.5 * std::log(4.0 / 3.0), 1e-15);
  // A certain P: KL((1, 0) || (1/2, 1/2)) = ln 2; the p = 0 term counts 0, not NaN.
  const std::vector<double> certain = {0.0, -std::numeric_limits<double>::infinity()};
  const auto half = logs({0.5, 0.5});
  EXPECT_NEAR(kl_divergence(certain.data(), half.data(), 2), std::log(2.0), 1e-15);
  // Asymmetric: the other direction is infinite.
  EXPECT_TRUE(std::isinf(kl_divergence(half.data(), certain.data(), 2)));
}

TEST(LogSoftmax, NormalizesAndIgnoresShiftsEvenForExtremeLogits) {
  const float logits[3] = {std::log(2.0f) + 1e4f, 1e4f, 1e4f};  // p = (1/2, 1/4, 1/4)
  double lp[3];
  log_softmax(logits, 3, lp);
  EXPECT_NEAR(lp[0], std::log(0.5), 1e-3);  // float logits near 1e4 keep ~1e-3 absolute
  EXPECT_NEAR(lp[1], std::log(0.25), 1e-3);
  const float small[2] = {0.0f, -1e30f};
  log_softmax(small, 2, lp);
  EXPECT_EQ(lp[0], 0.0);
  EXPECT_LT(lp[1], -1e29);
}

TEST(DistributionComparison, TwoPositionsByHand) {
  DistributionComparison c;
  // Position 1: identical, target 0: KL 0, same top, Δp 0.
  const auto a = logs({0.6, 0.4});
  c.add(a.data(), a.data(), 2, 0);
  // Position 2: base (1/2, 1/2) vs (1/4, 3/4), target 0: KL = 1/2 ln(4/3), Δp = 1/4 - 1/2.
  // Tops: base's first index of the max is 0, the other's is 1: they differ.
  const auto p = logs({0.5, 0.5}), q = logs({0.25, 0.75});
  c.add(p.data(), q.data(), 2, 0);
  const double kl = 0.5 * std::log(4.0 / 3.0);
  EXPECT_EQ(c.count(), 2);
  EXPECT_NEAR(c.mean_kld(), kl / 2, 1e-12);
  EXPECT_NEAR(c.max_kld(), kl, 1e-12);
  EXPECT_NEAR(c.kld_error(), kl / 2, 1e-12);  // sqrt(pop. var (kl/2)^2 / 1)
  EXPECT_DOUBLE_EQ(c.top1_agreement(), 0.5);
  EXPECT_NEAR(c.top1_error(), 0.5, 1e-12);  // sqrt(.5 * .5 / 1)
  EXPECT_NEAR(c.mean_abs_dp(), 0.125, 1e-12);
  EXPECT_NEAR(c.max_abs_dp(), 0.25, 1e-12);
  EXPECT_NEAR(c.base_nll().perplexity(), std::exp((-std::log(0.6) - std::log(0.5)) / 2), 1e-12);
  EXPECT_NEAR(c.nll().perplexity(), std::exp((-std::log(0.6) - std::log(0.25)) / 2), 1e-12);
}

TEST(DistributionComparison, PositionsWithoutTargetCountOnlyForKldAndTop1) {
  DistributionComparison c;
  const auto p = logs({0.5, 0.5}), q = logs({0.25, 0.75});
  c.add(p.data(), q.data(), 2, -1);
  EXPECT_EQ(c.count(), 1);
  EXPECT_EQ(c.nll().count(), 0);
  EXPECT_EQ(c.mean_abs_dp(), 0.0);
}

TEST(LogitDifference, RelativeToleranceAndNaN) {
  const std::vector<float> base = {10.0f, -20.0f, 5.0f};
  LogitDifference d;
  d.add(base.data(), std::vector<float>{10.0f, -20.001f, 5.0f}.data(), 3);
  EXPECT_NEAR(d.max_abs_diff, 0.001, 1e-5);
  EXPECT_EQ(d.max_abs_base, 20.0);
  EXPECT_NEAR(d.relative(), 0.00005, 1e-6);
  EXPECT_TRUE(d.within(1e-4));
  EXPECT_FALSE(d.within(1e-5));
  LogitDifference nan;
  nan.add(base.data(), std::vector<float>{10.0f, std::nanf(""), 5.0f}.data(), 3);
  EXPECT_FALSE(nan.within(1e30));
}

TEST(LogprobRecord, RoundTripsWithinHalfAStepAndKeepsKlNearZero) {
  Rng rng(11);
  const int64_t V = 1000;
  std::vector<uint8_t> record(static_cast<size_t>(logprob_record_bytes(V)));
  for (float spread : {0.0f, 1.0f, 8.0f, 40.0f}) {
    const std::vector<float> logits = random_logits(rng, V, spread);
    encode_logprob_record(logits.data(), V, record.data());
    std::vector<double> exact(V), decoded(V);
    log_softmax(logits.data(), V, exact.data());
    decode_logprob_record(record.data(), V, decoded.data());
    const double top = *std::max_element(exact.begin(), exact.end());
    for (int64_t i = 0; i < V; ++i) {
      if (exact[i] < top - kLogprobRange) continue;  // clipped to the floor by design
      EXPECT_NEAR(decoded[i], exact[i], kLogprobRange / 65535.0) << "spread " << spread << " i " << i;
    }
    EXPECT_LT(std::fabs(kl_divergence(exact.data(), decoded.data(), V)), 1e-7) << spread;
  }
}

TEST(LogprobFile, WritesAndReadsBackAndRefusesDamage) {
  Rng rng(3);
  const std::string path = testing::temp_path("logprobs.lp");
  LogprobFileHeader h{50, 8, 2, 4, {}};
  for (int i = 0; i < 16; ++i) h.tokens.push_back(i * 3);
  std::vector<std::vector<float>> rows;
  {
    LogprobFileWriter w(path, h);
    for (int i = 0; i < 2 * 3; ++i) {
      rows.push_back(random_logits(rng, 50, 5.0f));
      w.add(rows.back().data());
    }
    EXPECT_THROW(w.add(rows.back().data()), Error);  // one more than the header says
    w.finish();
  }
  LogprobFileReader r(path);
  EXPECT_EQ(r.header().n_vocab, 50);
  EXPECT_EQ(r.header().n_ctx, 8);
  EXPECT_EQ(r.header().n_chunks, 2);
  EXPECT_EQ(r.header().first, 4);
  EXPECT_EQ(r.header().tokens, h.tokens);
  std::vector<double> lp(50), exact(50);
  for (const auto& row : rows) {
    r.next(lp.data());
    log_softmax(row.data(), 50, exact.data());
    for (int i = 0; i < 50; ++i) EXPECT_NEAR(lp[i], exact[i], 2e-4);
  }
  EXPECT_THROW(r.next(lp.data()), Error);

  // Truncated: the size check names the file.
  const std::string cut = testing::temp_path("logprobs-cut.lp");
  const std::string bytes = testing::read_text(path);
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 1);
  try {
    LogprobFileReader bad(cut);
    FAIL() << "truncated file accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(cut), std::string::npos) << e.what();
  }
  const std::string junk = testing::temp_path("logprobs-junk.lp");
  std::ofstream(junk, std::ios::binary) << "this is no log-probability file at all";
  EXPECT_THROW(LogprobFileReader{junk}, Error);
}

// The pooled paths (records encoded on the pool, positions compared on it)
// against the one-position ones: the same file bytes, the same statistics bit
// for bit. 40 positions per chunk: more than one pass over the pool (16 or
// 2 x threads per pass), the last partial.
TEST(LogprobFile, PooledRowsMatchOneAtATime) {
  Rng rng(11);
  const int64_t V = 300, n_ctx = 82, first = 41, per_chunk = n_ctx - 1 - first;
  LogprobFileHeader h{V, n_ctx, 2, first, std::vector<int32_t>(2 * n_ctx, 7)};
  std::vector<float> logits(static_cast<size_t>(2 * per_chunk * V)), other(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    logits[i] = 6.0f * (2.0f * rng.uniform_f() - 1.0f);
    other[i] = logits[i] + 0.3f * (2.0f * rng.uniform_f() - 1.0f);
  }
  std::vector<int32_t> targets(static_cast<size_t>(2 * per_chunk));
  for (auto& t : targets) t = rng.uniform() < 0.2 ? -1 : static_cast<int32_t>(rng.below(V));
  const std::string one = testing::temp_path("logprobs-one.lp"), pooled = testing::temp_path("logprobs-pooled.lp");
  ThreadPool pool(2);
  {
    LogprobFileWriter a(one, h), b(pooled, h);
    for (int64_t r = 0; r < 2 * per_chunk; ++r) a.add(logits.data() + r * V);
    for (int64_t c = 0; c < 2; ++c) b.add_rows(logits.data() + c * per_chunk * V, per_chunk, pool);
    EXPECT_THROW(b.add_rows(logits.data(), 1, pool), Error);  // past the header's count
    a.finish();
    b.finish();
  }
  ASSERT_EQ(testing::read_text(one), testing::read_text(pooled));

  DistributionComparison want, got;
  {
    LogprobFileReader r(one);
    std::vector<double> base(V), lp(V);
    for (int64_t i = 0; i < 2 * per_chunk; ++i) {
      r.next(base.data());
      log_softmax(other.data() + i * V, V, lp.data());
      want.add(base.data(), lp.data(), V, targets[static_cast<size_t>(i)]);
    }
  }
  LogprobFileReader r(pooled);
  for (int64_t c = 0; c < 2; ++c)
    compare_with_base(r, other.data() + c * per_chunk * V, per_chunk, targets.data() + c * per_chunk, pool, got);
  EXPECT_THROW(compare_with_base(r, other.data(), 1, targets.data(), pool, got), Error);  // no records left
  ASSERT_EQ(got.count(), 2 * per_chunk);
  EXPECT_GT(got.mean_kld(), 0.0);
  EXPECT_EQ(got.mean_kld(), want.mean_kld());
  EXPECT_EQ(got.kld_error(), want.kld_error());
  EXPECT_EQ(got.max_kld(), want.max_kld());
  EXPECT_EQ(got.top1_agreement(), want.top1_agreement());
  EXPECT_EQ(got.mean_abs_dp(), want.mean_abs_dp());
  EXPECT_EQ(got.max_abs_dp(), want.max_abs_dp());
  EXPECT_EQ(got.nll().count(), want.nll().count());
  EXPECT_EQ(got.nll().mean(), want.nll().mean());
  EXPECT_EQ(got.base_nll().mean(), want.base_nll().mean());
}

}  // namespace
}  // namespace lowbit
