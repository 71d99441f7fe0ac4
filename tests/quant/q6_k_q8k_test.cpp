// The int8-activation dot of Q6_K (quant/q6_k.h), checked by hand and against
// the float dot of the dequantized weights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/half.h"
#include "core/rng.h"
#include "quant/q6_k.h"

namespace lowbit {
namespace {

// One block whose 256 weights are all (d * scale) * (value - 32).
std::vector<uint8_t> uniform_block(int value, int8_t scale, float d) {
  BlockQ6_K b{};
  for (auto& v : b.ql) v = static_cast<uint8_t>((value & 15) | (value & 15) << 4);
  const int high = value >> 4;
  for (auto& v : b.qh) v = static_cast<uint8_t>(high | high << 2 | high << 4 | high << 6);
  for (auto& s : b.scales) s = scale;
  b.d = float_to_fp16(d);
  std::vector<uint8_t> bytes(sizeof b);
  std::memcpy(bytes.data(), &b, sizeof b);
  return bytes;
}

TEST(Q6_KQ8K, ActivationsArePerBlockAbsmax) {
  std::vector<float> x(512, 0.0f);
  for (int i = 0; i < 256; ++i) x[i] = static_cast<float>(i % 7) - 3.0f;  // max |x| 3
  x[10] = -6.0f;                                                         // block 0 max: 6
  std::vector<int8_t> q(512, 99);
  float d[2];
  quantize_activations_q8k(x.data(), 512, q.data(), d);
  EXPECT_FLOAT_EQ(d[0], 6.0f / 127);
  EXPECT_EQ(q[10], -127);
  EXPECT_EQ(q[0], static_cast<int8_t>(std::nearbyint(-3.0f * 127 / 6)));  // -63.5 -> -64 (to even)
  EXPECT_EQ(d[1], 0.0f) << "a block of zeros has scale 0";
  for (int i = 256; i < 512; ++i) ASSERT_EQ(q[i], 0);
}

TEST(Q6_KQ8K, HandBlock) {
  // Weights all (0.5 * 2) * (40 - 32) = 8; activations all 1 -> q = 127, d = 1/127.
  const auto blk = uniform_block(40, 2, 0.5f);
  std::vector<float> x(256, 1.0f);
  std::vector<int8_t> q(256);
  float d;
  quantize_activations_q8k(x.data(), 256, q.data(), &d);
  const float y = dot_q6_k_q8k(blk.data(), q.data(), &d, 256);
  // I = 16 sub-blocks x scale 2 x 16 x (8 x 127); y = I * (0.5 * d).
  const int32_t expect_int = 16 * 2 * 16 * 8 * 127;
  EXPECT_EQ(y, static_cast<float>(expect_int) * (0.5f * d));
  EXPECT_NEAR(y, 256 * 8, 1e-3);
}

TEST(Q6_KQ8K, ExtremesStayExactInInt32) {
  // Values 0 (weight -32 x scale) and scales -128: the largest products there are.
  const auto blk = uniform_block(0, -128, 1.0f);
  std::vector<int8_t> q(256, -127);
  const float d = 1.0f;
  EXPECT_EQ(dot_q6_k_q8k(blk.data(), q.data(), &d, 256), static_cast<float>(256 * (-128) * (-32) * (-127)));
}

TEST(Q6_KQ8K, CloseToTheFloatDot) {
  Rng rng(5);
  const int64_t n = 2560;
  std::vector<float> w(n), x(n), wd(n);
  for (auto& v : w) v = static_cast<float>(rng.normal());
  for (auto& v : x) v = static_cast<float>(rng.normal());
  std::vector<uint8_t> row(n / 256 * sizeof(BlockQ6_K));
  quantize_row_q6_K(w.data(), row.data(), n);
  dequantize_row_q6_K(row.data(), wd.data(), n);
  std::vector<int8_t> q(n);
  std::vector<float> d(n / 256);
  quantize_activations_q8k(x.data(), n, q.data(), d.data());
  double exact = 0, magnitude = 0;
  for (int64_t i = 0; i < n; ++i) exact += static_cast<double>(wd[i]) * x[i], magnitude += std::fabs(wd[i] * x[i]);
  // Each activation is off by at most half a step (max|x| / 254 per block).
  double bound = 0;
  for (int64_t i = 0; i < n; ++i) bound += std::fabs(wd[i]) * d[i / 256] / 2;
  const float y = dot_q6_k_q8k(row.data(), q.data(), d.data(), n);
  EXPECT_LE(std::fabs(y - exact), bound + 1e-5 * magnitude);
  EXPECT_GT(std::fabs(y - exact), 0.0) << "int8 activations are an approximation";
}

}  // namespace
}  // namespace lowbit
