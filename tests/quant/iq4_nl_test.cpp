#include "quant/iq4_nl.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant/q4_0.h"
#include "quant_test_util.h"
#include "scaled_block_checks.h"

namespace lowbit::iq4_nl_test {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 18;  // fp16 d, then 16 bytes of nibbles
// llama.cpp's kvalues_iq4nl, written out again so the test does not read the code under test.
constexpr int kCodebook[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

float d_at(const std::vector<uint8_t>& row, int64_t b) { return le_fp16(&row[b * kBytes]); }
// Q4_0's order: byte j holds element j (low nibble) and element j + 16 (high nibble).
int index_at(const std::vector<uint8_t>& row, int64_t b, int64_t j) {
  const uint8_t byte = row[b * kBytes + 2 + j % 16];
  return j < 16 ? byte & 15 : byte >> 4;
}
int value_at(const std::vector<uint8_t>& row, int64_t b, int64_t j) { return kCodebook[index_at(row, b, j)]; }

std::vector<uint8_t> random_row(Rng& rng, int64_t blocks) { return test::random_scale_first_blocks(rng, blocks, kBytes); }

TEST(Iq4NlReference, DequantizeIsTheScaledCodebookInQ4_0Order) {
  Rng rng(501);
  const int64_t blocks = 9;
  const auto row = random_row(rng, blocks);
  std::vector<float> y(blocks * 32);
  dequantize_row_iq4_nl(row.data(), y.data(), blocks * 32);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < 32; ++j)
      ASSERT_EQ(y[b * 32 + j], static_cast<float>(static_cast<double>(d_at(row, b)) * value_at(row, b, j)))
          << b << " " << j;
}

TEST(Iq4NlReference, DotIsBlockScaledIntegerSums) {
  const test::ScaledBlockFormat format{32, kBytes, d_at, value_at, random_row, quantize_row_iq4_nl, dot_i8_iq4_nl};
  test::expect_dot_is_block_scaled_integer_sums(format, {1, 2, 37}, 502);
}

// Scaled codebook values whose largest magnitude is -127 * d come back bit for bit.
TEST(Iq4NlReference, QuantizeReproducesCodebookValuesExactly) {
  Rng rng(503);
  const int64_t blocks = 6;
  std::vector<float> x(blocks * 32);
  std::vector<int> idx(x.size());
  for (int64_t b = 0; b < blocks; ++b) {
    const float d = (b % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f, static_cast<int>(b) - 9);
    for (int64_t j = 0; j < 32; ++j) idx[b * 32 + j] = static_cast<int>(rng.below(16));
    idx[b * 32 + rng.below(32)] = 0;  // -127: the largest magnitude
    for (int64_t j = 0; j < 32; ++j) x[b * 32 + j] = static_cast<float>(kCodebook[idx[b * 32 + j]]) * d;
  }
  std::vector<uint8_t> row(blocks * kBytes);
  quantize_row_iq4_nl(x.data(), row.data(), static_cast<int64_t>(x.size()));
  std::vector<float> y(x.size());
  dequantize_row_iq4_nl(row.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i]) << i;
}

// The point of the codebook: on normally distributed weights its round trip
// is closer than Q4_0's at the same 4.5 bits.
TEST(Iq4NlReference, RoundTripBeatsQ4_0OnNormalWeights) {
  Rng rng(504);
  const int64_t n = 32 * 400;
  const auto x = test::random_normal(rng, n, 0.02f);
  std::vector<uint8_t> row(n / 32 * kBytes);
  std::vector<float> y(n), y4(n);
  quantize_row_iq4_nl(x.data(), row.data(), n);
  dequantize_row_iq4_nl(row.data(), y.data(), n);
  quantize_row_q4_0(x.data(), row.data(), n);
  dequantize_row_q4_0(row.data(), y4.data(), n);
  double e = 0, e4 = 0, xx = 0;
  for (int64_t i = 0; i < n; ++i) {
    e += std::pow(static_cast<double>(y[i]) - x[i], 2);
    e4 += std::pow(static_cast<double>(y4[i]) - x[i], 2);
    xx += std::pow(static_cast<double>(x[i]), 2);
  }
  EXPECT_LT(e, 0.85 * e4) << "iq4_nl rmse " << std::sqrt(e / n) << ", q4_0 " << std::sqrt(e4 / n);
  EXPECT_LT(std::sqrt(e / xx), 0.12) << "relative rmse";
}

TEST(Iq4NlReference, QuantizeExtremes) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(32);
  const std::vector<float> zeros(32, 0.0f);
  quantize_row_iq4_nl(zeros.data(), row.data(), 32);
  dequantize_row_iq4_nl(row.data(), y.data(), 32);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  // Beyond fp16: the scale stops at its largest finite value.
  const std::vector<float> huge(32, 1e8f);
  quantize_row_iq4_nl(huge.data(), row.data(), 32);
  dequantize_row_iq4_nl(row.data(), y.data(), 32);
  EXPECT_EQ(std::fabs(d_at(row, 0)), 65504.0f);
  for (int j = 0; j < 32; ++j) EXPECT_TRUE(std::isfinite(y[j])) << j;
  // One outlier among small values: everything finite, the outlier's sign kept.
  std::vector<float> outlier(32, 1.0f);
  outlier[5] = -5000.0f;
  quantize_row_iq4_nl(outlier.data(), row.data(), 32);
  dequantize_row_iq4_nl(row.data(), y.data(), 32);
  EXPECT_LT(y[5], -2500.0f);
  for (int j = 0; j < 32; ++j) EXPECT_TRUE(std::isfinite(y[j])) << j;
}

TEST(Iq4NlReference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(64);
  EXPECT_THROW(dequantize_row_iq4_nl(row.data(), y.data(), 48), Error);
  EXPECT_THROW(quantize_row_iq4_nl(y.data(), row.data(), 16), Error);
}

}  // namespace
}  // namespace lowbit::iq4_nl_test
