#include "quant/q8_0.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant_test_util.h"
#include "scaled_block_checks.h"

namespace lowbit::q8_0_test {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 34;  // fp16 d, then int8 qs[32]

float d_at(const std::vector<uint8_t>& row, int64_t b) { return le_fp16(&row[b * kBytes]); }
int q_at(const std::vector<uint8_t>& row, int64_t b, int64_t j) { return static_cast<int8_t>(row[b * kBytes + 2 + j]); }

std::vector<uint8_t> random_row(Rng& rng, int64_t blocks) { return test::random_scale_first_blocks(rng, blocks, kBytes); }

TEST(Q8_0Reference, DequantizeReadsScaleThenInt8s) {
  Rng rng(801);
  const int64_t blocks = 7;
  const auto row = random_row(rng, blocks);
  std::vector<float> y(blocks * 32);
  dequantize_row_q8_0(row.data(), y.data(), blocks * 32);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < 32; ++j)
      ASSERT_EQ(y[b * 32 + j], static_cast<float>(static_cast<double>(d_at(row, b)) * q_at(row, b, j)))
          << b << " " << j;
}

TEST(Q8_0Reference, DequantizeCarriesScaleExtremes) {
  for (uint16_t d : test::kExtremeFp16Scales) {
    std::vector<uint8_t> row(kBytes);
    test::put_le16(row.data(), d);
    for (int j = 0; j < 32; ++j) row[2 + j] = static_cast<uint8_t>(j % 2 ? 127 : -128);
    std::vector<float> y(32);
    dequantize_row_q8_0(row.data(), y.data(), 32);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], fp16_to_float(d) * (j % 2 ? 127.0f : -128.0f)) << d << " " << j;
  }
}

// Values already on the grid (q * d, d a power of two, some |q| = 127) come back bit for bit.
TEST(Q8_0Reference, QuantizeReproducesGridValuesExactly) {
  Rng rng(802);
  const int64_t blocks = 5;
  std::vector<float> x(blocks * 32);
  std::vector<int> q(x.size());
  std::vector<float> d(blocks);
  for (int64_t b = 0; b < blocks; ++b) {
    d[b] = std::ldexp(1.0f, static_cast<int>(b) * 3 - 8);
    for (int64_t j = 0; j < 32; ++j) q[b * 32 + j] = static_cast<int>(rng.below(255)) - 127;
    q[b * 32 + rng.below(32)] = rng.below(2) ? 127 : -127;
    for (int64_t j = 0; j < 32; ++j) x[b * 32 + j] = q[b * 32 + j] * d[b];
  }
  std::vector<uint8_t> row(blocks * kBytes);
  quantize_row_q8_0(x.data(), row.data(), static_cast<int64_t>(x.size()));
  for (int64_t b = 0; b < blocks; ++b) {
    ASSERT_EQ(d_at(row, b), d[b]);
    for (int64_t j = 0; j < 32; ++j) ASSERT_EQ(q_at(row, b, j), q[b * 32 + j]) << b << " " << j;
  }
}

TEST(Q8_0Reference, QuantizeRoundsHalfAwayFromZero) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;  // d = 1
  x[1] = 2.5f, x[2] = -2.5f, x[3] = 0.49f, x[4] = -126.5f;
  std::vector<uint8_t> row(kBytes);
  quantize_row_q8_0(x.data(), row.data(), 32);
  EXPECT_EQ(d_at(row, 0), 1.0f);
  EXPECT_EQ(q_at(row, 0, 1), 3);
  EXPECT_EQ(q_at(row, 0, 2), -3);
  EXPECT_EQ(q_at(row, 0, 3), 0);
  EXPECT_EQ(q_at(row, 0, 4), -127);
}

TEST(Q8_0Reference, RoundTripErrorWithinHalfStep) {
  Rng rng(803);
  for (float sigma : {1e-3f, 1.0f, 300.0f}) {
    const int64_t n = 32 * 33;
    auto x = test::random_normal(rng, n, sigma);
    x[5] = 0.0f;
    std::vector<uint8_t> row(n / 32 * kBytes);
    std::vector<float> y(n);
    quantize_row_q8_0(x.data(), row.data(), n);
    dequantize_row_q8_0(row.data(), y.data(), n);
    for (int64_t b = 0; b < n / 32; ++b) {
      double amax = 0;
      // std::max: GCC 12's aarch64 vectorizer crashes on this fmax reduction.
      for (int64_t j = 0; j < 32; ++j) amax = std::max(amax, static_cast<double>(std::fabs(x[b * 32 + j])));
      // Half a step, plus 127 times the scale's fp16 rounding error (2^-11
      // relative, or 2^-25 absolute where d is an fp16 subnormal).
      const double d = amax / 127;
      const double bound = (d / 2 + 127 * std::fmax(d / 2048, std::ldexp(1.0, -25))) * 1.0001;
      for (int64_t j = 0; j < 32; ++j) ASSERT_LE(std::fabs(y[b * 32 + j] - x[b * 32 + j]), bound) << sigma << " " << b;
    }
  }
}

TEST(Q8_0Reference, QuantizeExtremes) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(32);
  std::vector<float> zeros(32, 0.0f);
  quantize_row_q8_0(zeros.data(), row.data(), 32);
  dequantize_row_q8_0(row.data(), y.data(), 32);
  EXPECT_EQ(d_at(row, 0), 0.0f);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  // The largest block whose scale is still a finite fp16: 127 * 65504.
  std::vector<float> big(32, -127.0f * 65504.0f);
  quantize_row_q8_0(big.data(), row.data(), 32);
  dequantize_row_q8_0(row.data(), y.data(), 32);
  EXPECT_EQ(d_at(row, 0), 65504.0f);
  for (float v : y) EXPECT_EQ(v, -127.0f * 65504.0f);
}

TEST(Q8_0Reference, DotIsBlockScaledIntegerSums) {
  const test::ScaledBlockFormat format{32, kBytes, d_at, q_at, random_row, quantize_row_q8_0, dot_i8_q8_0};
  test::expect_dot_is_block_scaled_integer_sums(format, {1, 3, 40}, 804);
}

TEST(Q8_0Reference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(64);
  EXPECT_THROW(dequantize_row_q8_0(row.data(), y.data(), 33), Error);
  EXPECT_THROW(quantize_row_q8_0(y.data(), row.data(), 31), Error);
}

}  // namespace
}  // namespace lowbit::q8_0_test
