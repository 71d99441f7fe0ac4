// Q4_1, Q5_0 and Q5_1 (llama.cpp's 32-element blocks with an offset or a
// fifth bit): the layouts read again from their description, apart from the
// code under test, against dequantize on random blocks and hand-made ones;
// the plain quantizers' round trip; extremes; partial blocks refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "quant/q4_1.h"
#include "quant_test_util.h"

namespace lowbit::q4_1_test {
namespace {

using test::le_fp16;

struct Legacy {
  const char* name;
  int64_t bytes;   // per block of 32
  bool has_min;    // fp16 m after d
  bool five_bits;  // qh[4] before qs
  void (*dequantize)(const uint8_t*, float*, int64_t);
  void (*quantize)(const float*, uint8_t*, int64_t);
};
const Legacy kFormats[] = {{"q4_1", 20, true, false, dequantize_row_q4_1, quantize_row_q4_1},
                           {"q5_0", 22, false, true, dequantize_row_q5_0, quantize_row_q5_0},
                           {"q5_1", 24, true, true, dequantize_row_q5_1, quantize_row_q5_1}};

// Element e's value: the low nibble of qs[e] (e < 16) or the high nibble of
// qs[e - 16], plus 16 times bit e of the little-endian qh.
int q_at(const Legacy& f, const uint8_t* block, int e) {
  const uint8_t* qs = block + f.bytes - 16;
  const int low = e < 16 ? qs[e] % 16 : qs[e - 16] / 16;
  if (!f.five_bits) return low;
  const uint8_t* qh = block + (f.has_min ? 4 : 2);
  return low + 16 * ((qh[e / 8] >> (e % 8)) & 1);
}
float value_at(const Legacy& f, const uint8_t* block, int e) {
  const float d = le_fp16(block);
  if (!f.has_min) return d * static_cast<float>(q_at(f, block, e) - 16);
  const float product = d * static_cast<float>(q_at(f, block, e));
  return product + le_fp16(block + 2);
}

TEST(Q4_1Reference, DequantizeFollowsTheLayout) {
  Rng rng(631);
  const int64_t blocks = 9;
  for (const Legacy& f : kFormats) {
    auto row = test::random_bytes(rng, blocks * f.bytes);
    for (int64_t b = 0; b < blocks; ++b) {
      test::put_le16(&row[b * f.bytes], test::random_fp16_scale(rng));
      if (f.has_min) test::put_le16(&row[b * f.bytes + 2], test::random_fp16_scale(rng));
    }
    std::vector<float> y(blocks * 32);
    f.dequantize(row.data(), y.data(), blocks * 32);
    for (int64_t b = 0; b < blocks; ++b)
      for (int e = 0; e < 32; ++e) ASSERT_EQ(y[b * 32 + e], value_at(f, &row[b * f.bytes], e)) << f.name << " " << b << " " << e;
  }
}

TEST(Q4_1Reference, DequantizeHandBlocks) {
  std::vector<float> y(32);
  std::vector<uint8_t> q41(20, 0);
  test::put_le16(&q41[0], 0x3800);  // d = 0.5
  test::put_le16(&q41[2], 0xbc00);  // m = -1
  q41[4 + 3] = 0x9f;                // element 3: 15, element 19: 9
  dequantize_row_q4_1(q41.data(), y.data(), 32);
  EXPECT_EQ(y[3], 0.5f * 15 - 1);
  EXPECT_EQ(y[19], 0.5f * 9 - 1);
  EXPECT_EQ(y[0], -1.0f);

  std::vector<uint8_t> q50(22, 0);
  test::put_le16(&q50[0], 0x4000);  // d = 2
  q50[2 + 3] = 0x80;                // qh bit 31: element 31's fifth bit
  q50[6 + 15] = 0x70;               // element 31: low 4 bits 7
  q50[2 + 0] = 0x01;                // element 0: fifth bit, low bits 0
  dequantize_row_q5_0(q50.data(), y.data(), 32);
  EXPECT_EQ(y[31], 2.0f * (23 - 16));
  EXPECT_EQ(y[0], 0.0f);       // 16 - 16
  EXPECT_EQ(y[1], -32.0f);     // 0 - 16

  std::vector<uint8_t> q51(24, 0);
  test::put_le16(&q51[0], 0x3c00);  // d = 1
  test::put_le16(&q51[2], 0x3800);  // m = 0.5
  q51[4 + 2] = 0x02;                // qh bit 17: element 17
  q51[8 + 1] = 0x30;                // element 17: low 4 bits 3
  dequantize_row_q5_1(q51.data(), y.data(), 32);
  EXPECT_EQ(y[17], 19.5f);
  EXPECT_EQ(y[1], 0.5f);
}

TEST(Q4_1Reference, RoundTripWithinHalfAStep) {
  for (const Legacy& f : kFormats) {
    Rng rng(632);
    const int64_t n = 32 * 200;
    auto x = test::random_normal(rng, n, 0.02f);
    for (int64_t i = 0; i < n; i += 97) x[i] *= 8.0f;           // outliers
    for (int64_t i = 32; i < 64; ++i) x[i] = std::fabs(x[i]);  // a block without negatives
    std::vector<uint8_t> row(n / 32 * f.bytes);
    std::vector<float> y(n);
    f.quantize(x.data(), row.data(), n);
    f.dequantize(row.data(), y.data(), n);
    double e = 0, xx = 0;
    for (int64_t b = 0; b < n / 32; ++b) {
      const double step = le_fp16(&row[b * f.bytes]);
      for (int l = 0; l < 32; ++l) {
        const int64_t i = b * 32 + l;
        // Half a step, and for a min the fp16 rounding of the block's minimum.
        const double slack = f.has_min ? std::fabs(le_fp16(&row[b * f.bytes + 2])) * 1e-3 : 0.0;
        ASSERT_LE(std::fabs(y[i] - x[i]), 0.5 * step + slack + 1e-6) << f.name << " " << i;
        e += (y[i] - x[i]) * (y[i] - x[i]);
        xx += static_cast<double>(x[i]) * x[i];
      }
    }
    // Q5_0 has no min: its step spans the block's largest magnitude both ways.
    const double bound = !f.has_min ? 0.1 : f.five_bits ? 0.06 : 0.12;
    std::printf("[ %s ] relative rmse %.4f (bound %.2f)\n", f.name, std::sqrt(e / xx), bound);
    EXPECT_LT(std::sqrt(e / xx), bound) << f.name << " relative rmse";
  }
}

TEST(Q4_1Reference, QuantizeExtremes) {
  for (const Legacy& f : kFormats) {
    std::vector<uint8_t> row(static_cast<size_t>(f.bytes));
    std::vector<float> y(32);
    const std::vector<float> zeros(32, 0.0f);
    f.quantize(zeros.data(), row.data(), 32);
    f.dequantize(row.data(), y.data(), 32);
    for (float v : y) EXPECT_EQ(v, 0.0f) << f.name;
    std::vector<float> huge(32, 1e9f);  // the scales stop at fp16's largest finite value
    huge[5] = -1e9f;
    f.quantize(huge.data(), row.data(), 32);
    f.dequantize(row.data(), y.data(), 32);
    for (float v : y) EXPECT_TRUE(std::isfinite(v)) << f.name;
    EXPECT_LT(y[5], y[6]) << f.name;
  }
}

TEST(Q4_1Reference, RejectsPartialBlocks) {
  for (const Legacy& f : kFormats) {
    std::vector<uint8_t> row(static_cast<size_t>(2 * f.bytes));
    std::vector<float> y(64);
    EXPECT_THROW(f.dequantize(row.data(), y.data(), 48), Error) << f.name;
    EXPECT_THROW(f.quantize(y.data(), row.data(), 16), Error) << f.name;
  }
}

}  // namespace
}  // namespace lowbit::q4_1_test
