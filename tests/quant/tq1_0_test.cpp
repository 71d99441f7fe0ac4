#include "quant/tq1_0.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant_test_util.h"
#include "scaled_block_checks.h"

namespace lowbit::tq1_0_test {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 54;  // qs[48], qh[4], then fp16 d

float d_at(const std::vector<uint8_t>& row, int64_t b) { return le_fp16(&row[b * kBytes + 52]); }

// Where element e of a block lives: packed byte (qs then qh) and digit k
// (0 = most significant of the byte's five base-3 digits).
struct TritPlace {
  int64_t byte;
  int k;
};
TritPlace place(int64_t e) {
  if (e < 160) return {e % 32, static_cast<int>(e / 32)};
  if (e < 240) return {32 + (e - 160) % 16, static_cast<int>((e - 160) / 16)};
  return {48 + (e - 240) % 4, static_cast<int>((e - 240) / 4)};
}

// Decoding by division, independent of the multiply-and-take-top-bits trick:
// a byte v stands for the five-digit base-3 number floor(v * 243 / 256).
int value_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const TritPlace p = place(e);
  const int number = row[b * kBytes + p.byte] * 243 / 256;
  int digit = number;
  for (int i = 0; i < 4 - p.k; ++i) digit /= 3;
  return digit % 3 - 1;
}

std::vector<uint8_t> random_row(Rng& rng, int64_t blocks) {
  auto row = test::random_bytes(rng, blocks * kBytes);
  for (int64_t b = 0; b < blocks; ++b) test::put_le16(&row[b * kBytes + 52], test::random_fp16_scale(rng));
  return row;
}

TEST(TQ1_0Reference, DequantizeFollowsLlamaCppLayout) {
  Rng rng(101);
  const int64_t blocks = 7;
  const auto row = random_row(rng, blocks);  // every byte value occurs
  std::vector<float> y(blocks * 256);
  dequantize_row_tq1_0(row.data(), y.data(), blocks * 256);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t e = 0; e < 256; ++e)
      ASSERT_EQ(y[b * 256 + e], static_cast<float>(static_cast<double>(d_at(row, b)) * value_at(row, b, e)))
          << b << " " << e;
}

TEST(TQ1_0Reference, DequantizeEveryByteValue) {
  std::vector<uint8_t> row(kBytes, 0);
  test::put_le16(&row[52], 0x3c00);  // d = 1
  std::vector<float> y(256);
  for (int v = 0; v < 256; ++v) {
    row[0] = static_cast<uint8_t>(v);   // elements 0, 32, 64, 96, 128
    row[48] = static_cast<uint8_t>(v);  // elements 240, 244, 248, 252
    dequantize_row_tq1_0(row.data(), y.data(), 256);
    for (int k = 0; k < 5; ++k) ASSERT_EQ(y[32 * k], value_at(row, 0, 32 * k)) << v << " " << k;
    for (int k = 0; k < 4; ++k) ASSERT_EQ(y[240 + 4 * k], value_at(row, 0, 240 + 4 * k)) << v << " " << k;
  }
}

// Ternary input times a per-block d: the bytes are llama.cpp's
// ceil(digits * 256 / 243), and dequantization gives the input back.
TEST(TQ1_0Reference, PackThenUnpackIsExact) {
  Rng rng(102);
  const int64_t blocks = 6;
  std::vector<float> x(blocks * 256);
  std::vector<uint8_t> expect(blocks * kBytes, 0);
  const float scales[blocks] = {1.0f, 0.0137f, 65504.0f, 6.1035156e-5f /* 2^-14 */, 5.9604645e-8f /* 2^-24 */, 3.0f};
  for (int64_t b = 0; b < blocks; ++b) {
    auto t = test::random_ternary(rng, 256);
    t[7] = 1;  // the block's max|x| is d
    const float d = fp16_to_float(float_to_fp16(scales[b]));
    std::vector<int> digits(52, 0);
    for (int64_t e = 0; e < 256; ++e) {
      x[b * 256 + e] = t[e] * d;
      const TritPlace p = place(e);
      digits[p.byte] += (t[e] + 1) * static_cast<int>(std::pow(3, 4 - p.k));
    }
    for (int i = 0; i < 52; ++i) expect[b * kBytes + i] = static_cast<uint8_t>((digits[i] * 256 + 242) / 243);
    test::put_le16(&expect[b * kBytes + 52], float_to_fp16(d));
  }
  std::vector<uint8_t> row(blocks * kBytes);
  quantize_row_tq1_0(x.data(), row.data(), blocks * 256);
  EXPECT_EQ(row, expect);
  std::vector<float> y(x.size());
  dequantize_row_tq1_0(row.data(), y.data(), blocks * 256);
  EXPECT_EQ(y, x);
}

TEST(TQ1_0Reference, UniformBlocks) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(256);
  for (float v : {1.0f, -1.0f, 0.0f, 65504.0f}) {
    const std::vector<float> x(256, v);
    quantize_row_tq1_0(x.data(), row.data(), 256);
    dequantize_row_tq1_0(row.data(), y.data(), 256);
    EXPECT_EQ(y, x) << v;
  }
  // All +1: digits 22222 -> 255 in qs; 2222 then 0 -> 240 * 256 / 243 rounded up = 253 in qh.
  const std::vector<float> ones(256, 1.0f);
  quantize_row_tq1_0(ones.data(), row.data(), 256);
  for (int i = 0; i < 48; ++i) EXPECT_EQ(row[i], 255) << i;
  for (int i = 48; i < 52; ++i) EXPECT_EQ(row[i], 253) << i;
}

const test::ScaledBlockFormat kTQ10{256, kBytes, d_at, value_at, random_row, quantize_row_tq1_0, dot_i8_tq1_0};

TEST(TQ1_0Reference, QuantizeRoundsRatioToNearestTrit) { test::expect_quantize_rounds_ratio_to_nearest_trit(kTQ10, 103); }

TEST(TQ1_0Reference, DotIsBlockScaledIntegerSums) {
  test::expect_dot_is_block_scaled_integer_sums(kTQ10, {1, 2, 13}, 104);
}

TEST(TQ1_0Reference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(512);
  EXPECT_THROW(dequantize_row_tq1_0(row.data(), y.data(), 255), Error);
  EXPECT_THROW(quantize_row_tq1_0(y.data(), row.data(), 100), Error);
}

}  // namespace
}  // namespace lowbit::tq1_0_test
