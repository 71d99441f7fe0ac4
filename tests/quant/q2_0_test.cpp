#include "quant/q2_0.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "core/rng.h"

namespace lowbit::q2_0_test {
namespace {

// The layout read straight from the bytes, independently of q2_0.h's helpers:
// element j of block b: 2 bits at bit 2*(j%4) of byte 2 + j/4 of the 18-byte block.
int code_at(const std::vector<uint8_t>& row, int64_t b, int64_t j) {
  return (row[b * 18 + 2 + j / 4] >> (2 * (j % 4))) & 3;
}
float d_at(const std::vector<uint8_t>& row, int64_t b) { return fp16_to_float(row[b * 18] | (row[b * 18 + 1] << 8)); }

std::vector<float> random_row(Rng& rng, int64_t n) {
  std::vector<float> x(n);
  for (auto& v : x) v = static_cast<float>(rng.normal());
  return x;
}

TEST(Q2_0, DequantizeFollowsTheByteLayout) {
  // d = 0.5 (fp16 0x3800), codes 0,1,2,3 repeating: byte = 0b11100100.
  std::vector<uint8_t> row(18 * 2, 0);
  row[0] = 0x00, row[1] = 0x38;
  for (int i = 0; i < 16; ++i) row[2 + i] = 0xe4;
  row[18] = 0x00, row[19] = 0xc0;  // d = -2
  row[20] = 0x03;                  // element 0 = code 3, the rest code 0
  std::vector<float> y(128);
  dequantize_row_q2_0(row.data(), y.data(), 128);
  for (int j = 0; j < 64; ++j) EXPECT_EQ(y[j], 0.5f * static_cast<float>(j % 4 - 1)) << j;
  EXPECT_EQ(y[64], -4.0f);  // code 3 = +2d
  for (int j = 65; j < 128; ++j) EXPECT_EQ(y[j], 2.0f) << j;
}

TEST(Q2_0, QuantizeMatchesLlamaCppReference) {
  Rng rng(42);
  const int64_t n = 64 * 9;
  std::vector<float> x = random_row(rng, n);
  for (int j = 0; j < 64; ++j) x[64 + j] = 0.0f;     // an all-zero block
  x[128] = 3.0f, x[129] = -3.0f, x[130] = 1.5f;      // ties: 1.5 / 3 = 0.5 rounds away from zero
  std::vector<uint8_t> row(n / 64 * 18);
  quantize_row_q2_0(x.data(), row.data(), n);
  for (int64_t b = 0; b < n / 64; ++b) {
    float amax = 0;
    for (int j = 0; j < 64; ++j) amax = std::fmax(amax, std::fabs(x[b * 64 + j]));
    ASSERT_EQ(d_at(row, b), fp16_to_float(float_to_fp16(amax))) << b;
    for (int j = 0; j < 64; ++j) {
      const float r = amax > 0 ? x[b * 64 + j] * (1.0f / amax) : 0.0f;
      const int expect = std::lround(r) + 1;  // r in [-1, 1]: never clamps
      ASSERT_EQ(code_at(row, b, j), expect) << b << " " << j;
    }
  }
  EXPECT_EQ(code_at(row, 1, 0), 1);
  EXPECT_EQ(code_at(row, 2, 0), 2);
  EXPECT_EQ(code_at(row, 2, 1), 0);
  EXPECT_EQ(code_at(row, 2, 2), 2);  // 0.5 -> 1
}

TEST(Q2_0, RoundTripErrorIsHalfAStep) {
  Rng rng(7);
  const int64_t n = 64 * 32;
  const std::vector<float> x = random_row(rng, n);
  std::vector<uint8_t> row(n / 64 * 18);
  std::vector<float> y(n);
  quantize_row_q2_0(x.data(), row.data(), n);
  dequantize_row_q2_0(row.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float d = d_at(row, i / 64);
    ASSERT_LE(std::fabs(y[i] - x[i]), 0.5f * d * (1 + 1.0f / 512)) << i;
  }
}

TEST(Q2_0, DotIsExactIntegerPerBlockThenFloatInBlockOrder) {
  Rng rng(3);
  const int64_t n = 64 * 40;
  std::vector<uint8_t> row(n / 64 * 18);
  for (auto& b : row) b = static_cast<uint8_t>(rng.next_u32());  // every code, random fp16 bits
  for (int64_t b = 0; b < n / 64; ++b) row[b * 18 + 1] &= 0x3b;   // keep d finite and moderate
  std::vector<int8_t> q(n);
  for (auto& v : q) v = static_cast<int8_t>(rng.next_u32());
  q[0] = -128, q[1] = 127;
  float expect = 0;
  double approx = 0;
  for (int64_t b = 0; b < n / 64; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < 64; ++j) isum += (code_at(row, b, j) - 1) * q[b * 64 + j];
    expect += d_at(row, b) * static_cast<float>(isum);
    approx += static_cast<double>(d_at(row, b)) * isum;
  }
  const float got = dot_i8_q2_0(row.data(), q.data(), n);
  EXPECT_EQ(got, expect);
  EXPECT_NEAR(got, approx, 1e-4 * std::fabs(approx) + 1e-3);
}

TEST(Q2_0, RowLengthMustBeWholeBlocks) {
  std::vector<uint8_t> row(18 * 2);
  std::vector<float> y(100);
  EXPECT_THROW(dequantize_row_q2_0(row.data(), y.data(), 100), Error);
  EXPECT_THROW(quantize_row_q2_0(y.data(), row.data(), 65), Error);
}

}  // namespace
}  // namespace lowbit::q2_0_test
