// IQ4_XS (llama.cpp's IQ4_NL codebook in super-blocks of 256 with a 6-bit
// scale per 32): the layout read again from its description, apart from the
// code under test, against dequantize on random blocks and a hand-made one;
// the plain quantizer's round trip; extremes; partial blocks refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "quant/iq4_nl.h"
#include "quant/iq4_xs.h"
#include "quant_test_util.h"

namespace lowbit::iq4_xs_test {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 136;  // d, scales_h, scales_l[4], qs[128]

// Sub-block j's code: low 4 bits from scales_l[j / 2] (low nibble for even
// j), top 2 from bits 2j..2j+1 of the little-endian scales_h.
int code_at(const std::vector<uint8_t>& row, int64_t b, int j) {
  const uint8_t* p = &row[b * kBytes];
  const int scales_h = p[2] + 256 * p[3];
  const int low = j % 2 == 0 ? p[4 + j / 2] % 16 : p[4 + j / 2] / 16;
  return low + 16 * ((scales_h >> (2 * j)) % 4);
}
// Element e = 32j + l: byte l % 16 of sub-block j's 16 (low nibble for l < 16).
int index_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const uint8_t byte = row[b * kBytes + 8 + 16 * (e / 32) + e % 16];
  return e % 32 < 16 ? byte % 16 : byte / 16;
}
float value_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const float step = le_fp16(&row[b * kBytes]) * static_cast<float>(code_at(row, b, static_cast<int>(e / 32)) - 32);
  return step * static_cast<float>(kIq4NlValues[static_cast<size_t>(index_at(row, b, e))]);
}

TEST(Iq4XsReference, DequantizeFollowsTheLayout) {
  Rng rng(641);
  const int64_t blocks = 7;
  auto row = test::random_bytes(rng, blocks * kBytes);
  for (int64_t b = 0; b < blocks; ++b) test::put_le16(&row[b * kBytes], test::random_fp16_scale(rng));
  std::vector<float> y(blocks * 256);
  dequantize_row_iq4_xs(row.data(), y.data(), blocks * 256);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t e = 0; e < 256; ++e) ASSERT_EQ(y[b * 256 + e], value_at(row, b, e)) << b << " " << e;
}

TEST(Iq4XsReference, DequantizeHandBlock) {
  std::vector<uint8_t> row(kBytes, 0);
  test::put_le16(&row[0], 0x3800);  // d = 0.5
  // Sub-block 0: code 33 (low 1 in scales_l[0]'s low nibble, top 2 bits 2 in scales_h bits 0-1);
  // sub-block 3: code 30 (low 14 in scales_l[1]'s high nibble, top 1 at scales_h bits 6-7).
  row[4] = 0x01;
  row[5] = 0xe0;
  test::put_le16(&row[2], 0x0002 | 0x0001 << 6);
  row[8 + 0] = 0xf0;       // element 0: index 0 (-127), element 16: index 15 (113)
  row[8 + 48 + 5] = 0x08;  // element 96 + 5: index 8 (1), element 96 + 21: index 0 (-127)
  std::vector<float> y(256);
  dequantize_row_iq4_xs(row.data(), y.data(), 256);
  EXPECT_EQ(y[0], 0.5f * 1 * -127);
  EXPECT_EQ(y[16], 0.5f * 1 * 113);
  EXPECT_EQ(y[101], 0.5f * -2 * 1);
  EXPECT_EQ(y[117], 0.5f * -2 * -127);
  EXPECT_EQ(y[32], 0.5f * -32 * -127);  // sub-block 1: code 0
}

TEST(Iq4XsReference, RoundTripWithinTheCodebooksGaps) {
  Rng rng(642);
  const int64_t n = 256 * 40;
  auto x = test::random_normal(rng, n, 0.02f);
  for (int64_t i = 0; i < n; i += 97) x[i] *= 8.0f;  // outliers
  std::vector<uint8_t> row(n / 256 * kBytes);
  std::vector<float> y(n);
  quantize_row_iq4_xs(x.data(), row.data(), n);
  dequantize_row_iq4_xs(row.data(), y.data(), n);
  double e = 0, xx = 0;
  for (int64_t b = 0; b < n / 256; ++b)
    for (int j = 0; j < 8; ++j) {
      const double step = le_fp16(&row[b * kBytes]) * (code_at(row, b, j) - 32);
      const double lo = std::min(-127 * step, 113 * step), hi = std::max(-127 * step, 113 * step);
      for (int l = 0; l < 32; ++l) {
        const int64_t i = b * 256 + 32 * j + l;
        // Inside the codebook's range: half its largest gap (113 - 89 = 24) of
        // a step; beyond it (the step's code rounded down): the distance to its end.
        const double beyond = std::max(lo - x[i], x[i] - hi);
        ASSERT_LE(std::fabs(y[i] - x[i]), std::max(12.0 * std::fabs(step), beyond) + 1e-6) << i;
        e += (y[i] - x[i]) * (y[i] - x[i]);
        xx += static_cast<double>(x[i]) * x[i];
      }
    }
  std::printf("[ iq4_xs ] relative rmse %.4f\n", std::sqrt(e / xx));
  EXPECT_LT(std::sqrt(e / xx), 0.12) << "relative rmse";
}

TEST(Iq4XsReference, QuantizeExtremes) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(256);
  const std::vector<float> zeros(256, 0.0f);
  quantize_row_iq4_xs(zeros.data(), row.data(), 256);
  dequantize_row_iq4_xs(row.data(), y.data(), 256);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  std::vector<float> huge(256, 1e9f);  // the scale stops at fp16's largest finite value
  huge[7] = -1e9f;
  quantize_row_iq4_xs(huge.data(), row.data(), 256);
  dequantize_row_iq4_xs(row.data(), y.data(), 256);
  for (float v : y) EXPECT_TRUE(std::isfinite(v));
  EXPECT_LT(y[7], 0.0f);
  EXPECT_GT(y[8], 0.0f);
}

TEST(Iq4XsReference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(512);
  EXPECT_THROW(dequantize_row_iq4_xs(row.data(), y.data(), 384), Error);
  EXPECT_THROW(quantize_row_iq4_xs(y.data(), row.data(), 128), Error);
}

}  // namespace
}  // namespace lowbit::iq4_xs_test
