#include "quant/q4_0.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant_test_util.h"
#include "scaled_block_checks.h"

namespace lowbit::q4_0_test {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 18;  // fp16 d, then 16 bytes of nibbles

float d_at(const std::vector<uint8_t>& row, int64_t b) { return le_fp16(&row[b * kBytes]); }
// llama.cpp's order: byte j holds element j (low nibble) and element j + 16 (high nibble).
int value_at(const std::vector<uint8_t>& row, int64_t b, int64_t j) {
  const uint8_t byte = row[b * kBytes + 2 + j % 16];
  return (j < 16 ? byte & 15 : byte >> 4) - 8;
}

std::vector<uint8_t> random_row(Rng& rng, int64_t blocks) { return test::random_scale_first_blocks(rng, blocks, kBytes); }

TEST(Q4_0Reference, DequantizeFollowsLlamaCppNibbleOrder) {
  Rng rng(401);
  const int64_t blocks = 9;
  const auto row = random_row(rng, blocks);
  std::vector<float> y(blocks * 32);
  dequantize_row_q4_0(row.data(), y.data(), blocks * 32);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < 32; ++j)
      ASSERT_EQ(y[b * 32 + j], static_cast<float>(static_cast<double>(d_at(row, b)) * value_at(row, b, j)))
          << b << " " << j;
}

TEST(Q4_0Reference, DequantizeHandBlock) {
  std::vector<uint8_t> row(kBytes, 0x88);  // every value 0
  test::put_le16(row.data(), 0x4000);      // d = 2
  row[2] = 0xf0;                           // element 0: 0 - 8, element 16: 15 - 8
  row[17] = 0x0f;                          // element 15: 15 - 8, element 31: 0 - 8
  std::vector<float> y(32);
  dequantize_row_q4_0(row.data(), y.data(), 32);
  for (int j = 0; j < 32; ++j) {
    const float expect = j == 0 || j == 31 ? -16.0f : j == 16 || j == 15 ? 14.0f : 0.0f;
    EXPECT_EQ(y[j], expect) << j;
  }
}

// Grid values whose largest magnitude is -8 * d (the first such element) come back bit for bit.
TEST(Q4_0Reference, QuantizeReproducesGridValuesExactly) {
  Rng rng(402);
  const int64_t blocks = 6;
  std::vector<float> x(blocks * 32);
  std::vector<int> v(x.size());
  for (int64_t b = 0; b < blocks; ++b) {
    const float d = (b % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f, static_cast<int>(b) - 3);
    for (int64_t j = 0; j < 32; ++j) v[b * 32 + j] = static_cast<int>(rng.below(15)) - 7;  // -7..7
    v[b * 32 + rng.below(32)] = -8;
    for (int64_t j = 0; j < 32; ++j) x[b * 32 + j] = v[b * 32 + j] * d;
  }
  std::vector<uint8_t> row(blocks * kBytes);
  quantize_row_q4_0(x.data(), row.data(), static_cast<int64_t>(x.size()));
  for (int64_t b = 0; b < blocks; ++b) {
    ASSERT_EQ(d_at(row, b), (b % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f, static_cast<int>(b) - 3));
    for (int64_t j = 0; j < 32; ++j) ASSERT_EQ(value_at(row, b, j), v[b * 32 + j]) << b << " " << j;
  }
}

TEST(Q4_0Reference, QuantizeScaleTakesTheSignOfTheLargestElement) {
  std::vector<float> x(32, 0.0f);
  x[3] = 16.0f;   // largest: d = 16 / -8 = -2, maps to -8
  x[4] = -16.0f;  // same magnitude, later: x / d = +8 -> clipped to 7
  x[20] = 3.0f;   // 3 / -2 + 8.5 = 7 -> -1
  std::vector<uint8_t> row(kBytes);
  quantize_row_q4_0(x.data(), row.data(), 32);
  EXPECT_EQ(d_at(row, 0), -2.0f);
  EXPECT_EQ(value_at(row, 0, 3), -8);
  EXPECT_EQ(value_at(row, 0, 4), 7);
  EXPECT_EQ(value_at(row, 0, 20), -1);
  EXPECT_EQ(value_at(row, 0, 0), 0);
}

TEST(Q4_0Reference, RoundTripErrorWithinOneStep) {
  Rng rng(403);
  const int64_t n = 32 * 50;
  const auto x = test::random_normal(rng, n, 2.0f);
  std::vector<uint8_t> row(n / 32 * kBytes);
  std::vector<float> y(n);
  quantize_row_q4_0(x.data(), row.data(), n);
  dequantize_row_q4_0(row.data(), y.data(), n);
  for (int64_t b = 0; b < n / 32; ++b) {
    const double step = std::fabs(d_at(row, b));
    for (int64_t j = 0; j < 32; ++j) {
      const double err = std::fabs(y[b * 32 + j] - x[b * 32 + j]);
      // Half a step inside the grid (plus 8 steps' worth of the scale's fp16
      // rounding); the side opposite the largest element is clipped at 7 steps.
      const bool clipped = x[b * 32 + j] / d_at(row, b) > 7.5;
      ASSERT_LE(err, step * ((clipped ? 1.0 : 0.5) + 8.0 / 2048) * 1.001) << b << " " << j;
    }
  }
}

TEST(Q4_0Reference, QuantizeExtremes) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(32);
  const std::vector<float> zeros(32, 0.0f);
  quantize_row_q4_0(zeros.data(), row.data(), 32);
  dequantize_row_q4_0(row.data(), y.data(), 32);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  const std::vector<float> big(32, 8.0f * 65504.0f);  // d = -65504, the largest finite fp16
  quantize_row_q4_0(big.data(), row.data(), 32);
  dequantize_row_q4_0(row.data(), y.data(), 32);
  EXPECT_EQ(d_at(row, 0), -65504.0f);
  for (float v : y) EXPECT_EQ(v, 8.0f * 65504.0f);
}

TEST(Q4_0Reference, DotIsBlockScaledIntegerSums) {
  const test::ScaledBlockFormat format{32, kBytes, d_at, value_at, random_row, quantize_row_q4_0, dot_i8_q4_0};
  test::expect_dot_is_block_scaled_integer_sums(format, {1, 2, 37}, 404);
}

TEST(Q4_0Reference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(64);
  EXPECT_THROW(dequantize_row_q4_0(row.data(), y.data(), 48), Error);
  EXPECT_THROW(quantize_row_q4_0(y.data(), row.data(), 16), Error);
}

}  // namespace
}  // namespace lowbit::q4_0_test
