#include "quant/ternarize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "quant_test_util.h"

namespace lowbit::ternarize_test {
namespace {

TEST(TernarizeAbsmean, HandVector) {
  const std::vector<float> w = {0.5f, -1.5f, 0.1f, 0.0f};  // mean|w| = 0.525
  std::vector<int8_t> t(4);
  EXPECT_EQ(ternarize_absmean(w.data(), 4, t.data()), 0.525f);
  EXPECT_EQ(t, (std::vector<int8_t>{1, -1, 0, 0}));  // 0.95 -> 1, -2.86 -> -1 (clamped), 0.19 -> 0
}

// torch.round rounds half to even: w / gamma = +-0.5 gives 0, +-1.5 gives +-2 -> clamped to +-1.
TEST(TernarizeAbsmean, RoundsHalfToEven) {
  const std::vector<float> w = {1.5f, 0.5f, -0.5f, -1.5f};  // gamma = 1
  std::vector<int8_t> t(4);
  EXPECT_EQ(ternarize_absmean(w.data(), 4, t.data()), 1.0f);
  EXPECT_EQ(t, (std::vector<int8_t>{1, 0, 0, -1}));
}

TEST(TernarizeAbsmean, ZerosUseTheFloorScale) {
  const std::vector<float> w(100, 0.0f);
  std::vector<int8_t> t(100, 9);
  EXPECT_EQ(ternarize_absmean(w.data(), 100, t.data()), 1e-5f);
  for (int8_t v : t) EXPECT_EQ(v, 0);
  // Tiny weights: gamma clamps to 1e-5, so 6e-6 rounds to 1 and 4e-6 to 0.
  const std::vector<float> tiny = {6e-6f, -4e-6f, 0.0f, 0.0f};
  std::vector<int8_t> tt(4);
  EXPECT_EQ(ternarize_absmean(tiny.data(), 4, tt.data()), 1e-5f);
  EXPECT_EQ(tt, (std::vector<int8_t>{1, 0, 0, 0}));
}

// s * t with any s maps back to t exactly (every nonzero weight is at least the mean).
TEST(TernarizeAbsmean, TernaryInputMapsBackExactly) {
  Rng rng(71);
  for (float s : {0.013f, 1.0f, 7.5e3f}) {
    auto t = test::random_ternary(rng, 1000);
    t[0] = -1;
    std::vector<float> w(t.size());
    int nonzero = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      w[i] = s * t[i];
      nonzero += t[i] != 0;
    }
    std::vector<int8_t> back(t.size());
    const float gamma = ternarize_absmean(w.data(), 1000, back.data());
    EXPECT_EQ(back, t) << s;
    EXPECT_NEAR(gamma, s * nonzero / 1000.0, s * 1e-6) << s;
  }
}

TEST(TernarizeAbsmean, MatchesDoubleFormulaOnRandomWeights) {
  Rng rng(72);
  const auto w = test::random_normal(rng, 4097, 0.02f);
  std::vector<int8_t> t(w.size());
  const float gamma = ternarize_absmean(w.data(), 4097, t.data());
  double mean = 0;
  for (float v : w) mean += std::fabs(v) / 4097;
  EXPECT_NEAR(gamma, mean, mean * 1e-6);
  for (size_t i = 0; i < w.size(); ++i) {
    const double r = w[i] / mean;
    if (std::fabs(std::fabs(r) - 0.5) < 1e-5) continue;  // too close to the tie to call in double
    ASSERT_EQ(t[i], r > 0.5 ? 1 : r < -0.5 ? -1 : 0) << i;
  }
}

}  // namespace
}  // namespace lowbit::ternarize_test
