#include "quant/q1_0.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "core/rng.h"

namespace lowbit::q1_0_test {
namespace {

// The layout read straight from the bytes: element j of block b is bit j%8 of
// byte 2 + j/8 of the 18-byte block.
int bit_at(const std::vector<uint8_t>& row, int64_t b, int64_t j) { return (row[b * 18 + 2 + j / 8] >> (j % 8)) & 1; }
float d_at(const std::vector<uint8_t>& row, int64_t b) { return fp16_to_float(row[b * 18] | (row[b * 18 + 1] << 8)); }

TEST(Q1_0, DequantizeFollowsTheByteLayout) {
  std::vector<uint8_t> row(18, 0);
  row[0] = 0x00, row[1] = 0x3c;  // d = 1
  row[2] = 0x01;                 // element 0 set
  row[17] = 0x80;                // element 127 set
  std::vector<float> y(128);
  dequantize_row_q1_0(row.data(), y.data(), 128);
  for (int j = 0; j < 128; ++j) EXPECT_EQ(y[j], (j == 0 || j == 127) ? 1.0f : -1.0f) << j;
}

TEST(Q1_0, QuantizeMatchesLlamaCppReference) {
  Rng rng(5);
  const int64_t n = 128 * 6;
  std::vector<float> x(n);
  for (auto& v : x) v = static_cast<float>(rng.normal());
  x[0] = 0.0f, x[1] = -0.0f, x[2] = -1e-30f;
  std::vector<uint8_t> row(n / 128 * 18);
  quantize_row_q1_0(x.data(), row.data(), n);
  for (int64_t b = 0; b < n / 128; ++b) {
    float s = 0;
    for (int j = 0; j < 128; ++j) s += std::fabs(x[b * 128 + j]);
    ASSERT_EQ(d_at(row, b), fp16_to_float(float_to_fp16(s / 128))) << b;
    for (int j = 0; j < 128; ++j) ASSERT_EQ(bit_at(row, b, j), x[b * 128 + j] >= 0 ? 1 : 0) << b << " " << j;
  }
  EXPECT_EQ(bit_at(row, 0, 0), 1);
  EXPECT_EQ(bit_at(row, 0, 1), 1);  // -0.0 >= 0
  EXPECT_EQ(bit_at(row, 0, 2), 0);
}

TEST(Q1_0, RoundTripKeepsSignsAndMeanMagnitude) {
  Rng rng(9);
  const int64_t n = 128 * 8;
  std::vector<float> x(n), y(n);
  for (auto& v : x) v = static_cast<float>(rng.normal()) + 0.01f;
  std::vector<uint8_t> row(n / 128 * 18);
  quantize_row_q1_0(x.data(), row.data(), n);
  dequantize_row_q1_0(row.data(), y.data(), n);
  for (int64_t b = 0; b < n / 128; ++b) {
    double mean_abs = 0;
    for (int j = 0; j < 128; ++j) mean_abs += std::fabs(x[b * 128 + j]) / 128;
    for (int j = 0; j < 128; ++j) {
      const float v = y[b * 128 + j];
      ASSERT_EQ(v >= 0, x[b * 128 + j] >= 0);
      ASSERT_NEAR(std::fabs(v), mean_abs, mean_abs / 1000);
    }
  }
}

TEST(Q1_0, DotIsExactIntegerPerBlockThenFloatInBlockOrder) {
  Rng rng(11);
  const int64_t n = 128 * 30;
  std::vector<uint8_t> row(n / 128 * 18);
  for (auto& b : row) b = static_cast<uint8_t>(rng.next_u32());
  for (int64_t b = 0; b < n / 128; ++b) row[b * 18 + 1] &= 0x3b;
  std::vector<int8_t> q(n);
  for (auto& v : q) v = static_cast<int8_t>(rng.next_u32());
  for (int j = 0; j < 128; ++j) q[j] = -128;  // a whole block at the extreme
  float expect = 0;
  for (int64_t b = 0; b < n / 128; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < 128; ++j) isum += (bit_at(row, b, j) ? 1 : -1) * q[b * 128 + j];
    expect += d_at(row, b) * static_cast<float>(isum);
  }
  EXPECT_EQ(dot_i8_q1_0(row.data(), q.data(), n), expect);
}

TEST(Q1_0, RowLengthMustBeWholeBlocks) {
  std::vector<uint8_t> row(18 * 2);
  std::vector<float> y(200);
  EXPECT_THROW(dequantize_row_q1_0(row.data(), y.data(), 192), Error);
  EXPECT_THROW(quantize_row_q1_0(y.data(), row.data(), 64), Error);
}

}  // namespace
}  // namespace lowbit::q1_0_test
