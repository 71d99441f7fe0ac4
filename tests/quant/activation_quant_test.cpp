#include "quant/activation_quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "quant_test_util.h"

namespace lowbit::activation_quant_test {
namespace {

TEST(ActivationQuant, HandVector) {
  const std::vector<float> x = {1.0f, -0.5f, 0.25f};
  std::vector<int8_t> q(3);
  const auto r = quantize_activations_absmax_ref(x.data(), 3, q.data());
  EXPECT_EQ(r.scale, 127.0f);
  EXPECT_EQ(q, (std::vector<int8_t>{127, -64, 32}));  // -63.5 rounds away from zero
  EXPECT_EQ(r.sum, 95);
}

TEST(ActivationQuant, ZerosGiveZeros) {
  const std::vector<float> x(37, 0.0f);
  std::vector<int8_t> q(37, 5);
  const auto r = quantize_activations_absmax_ref(x.data(), 37, q.data());
  EXPECT_EQ(r.scale, static_cast<float>(127.0 / 1e-5));
  EXPECT_EQ(r.sum, 0);
  for (int8_t v : q) EXPECT_EQ(v, 0);
}

// max|x| below 1e-5 is clamped to 1e-5, so small rows do not blow up to +-127.
TEST(ActivationQuant, TinyRowsUseTheFloor) {
  const std::vector<float> x = {5e-6f, -1e-6f};
  std::vector<int8_t> q(2);
  const auto r = quantize_activations_absmax_ref(x.data(), 2, q.data());
  EXPECT_EQ(r.scale, static_cast<float>(127.0 / 1e-5));
  EXPECT_EQ(q[0], 64);   // 5e-6f * 1.27e7 = 63.4999984, which the float product rounds to 63.5; away from zero
  EXPECT_EQ(q[1], -13);  // -12.7
}

TEST(ActivationQuant, ExtremeMagnitudesStayInRange) {
  const float big = std::numeric_limits<float>::max();
  const std::vector<float> x = {big, -big, big / 127, 0.0f};
  std::vector<int8_t> q(4);
  const auto r = quantize_activations_absmax_ref(x.data(), 4, q.data());
  EXPECT_EQ(q, (std::vector<int8_t>{127, -127, 1, 0}));
  EXPECT_EQ(r.sum, 1);
}

TEST(ActivationQuant, RandomRowsMatchTheFormula) {
  Rng rng(91);
  for (float sigma : {1e-3f, 1.0f, 1e4f}) {
    const auto x = test::random_normal(rng, 2560, sigma);
    std::vector<int8_t> q(x.size());
    const auto r = quantize_activations_absmax_ref(x.data(), 2560, q.data());
    double amax = 0;
    // std::max: GCC 12's aarch64 vectorizer crashes on this fmax reduction.
    for (float v : x) amax = std::max(amax, static_cast<double>(std::fabs(v)));
    EXPECT_EQ(r.scale, static_cast<float>(127.0 / amax));
    int32_t sum = 0;
    bool hit_127 = false;
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_LE(std::abs(q[i]), 127);
      ASSERT_LE(std::fabs(q[i] / static_cast<double>(r.scale) - x[i]), 0.5 / r.scale * 1.0001 + amax * 1e-7) << i;
      hit_127 |= std::abs(q[i]) == 127;
      sum += q[i];
    }
    EXPECT_TRUE(hit_127);
    EXPECT_EQ(r.sum, sum);
  }
}

}  // namespace
}  // namespace lowbit::activation_quant_test
