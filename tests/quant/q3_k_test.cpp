// Q3_K (llama.cpp's 3-bit k-quant): the layout read again from its
// description, apart from the code under test, against dequantize on random
// blocks and a hand-made one; the plain quantizer's round trip; extremes;
// partial blocks refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant/q3_k.h"
#include "quant_test_util.h"

namespace lowbit::q3_k_test {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 110;  // hmask[32], qs[64], scales[12], d

// Sub-block s's 6-bit code: its low 4 bits from scales[s % 8] (low nibble for
// s < 8, high for s >= 8), its high 2 from scales[8 + s % 4] at bit 2 (s / 4).
int code_at(const std::vector<uint8_t>& row, int64_t b, int s) {
  const uint8_t* sc = &row[b * kBytes + 96];
  const int low = s < 8 ? sc[s] % 16 : sc[s - 8] / 16;
  const int high = (sc[8 + s % 4] >> (2 * (s / 4))) % 4;
  return low + 16 * high;
}
// Element e: half h = e / 128, 32-group j = (e % 128) / 32, l = e % 32: bits
// 2j..2j+1 of qs[32h + l], minus 4 unless bit 4h + j of hmask[l] is set.
int value_code_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const int64_t h = e / 128, j = (e % 128) / 32, l = e % 32;
  const int low = (row[b * kBytes + 32 + 32 * h + l] >> (2 * j)) % 4;
  const bool high = (row[b * kBytes + l] >> (4 * h + j)) % 2 == 1;
  return high ? low : low - 4;
}
float d_at(const std::vector<uint8_t>& row, int64_t b) { return le_fp16(&row[b * kBytes + 108]); }
float value_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const float step = d_at(row, b) * static_cast<float>(code_at(row, b, static_cast<int>(e / 16)) - 32);
  return step * static_cast<float>(value_code_at(row, b, e));
}

TEST(Q3KReference, DequantizeFollowsTheLayout) {
  Rng rng(621);
  const int64_t blocks = 7;
  auto row = test::random_bytes(rng, blocks * kBytes);
  for (int64_t b = 0; b < blocks; ++b) test::put_le16(&row[b * kBytes + 108], test::random_fp16_scale(rng));
  std::vector<float> y(blocks * 256);
  dequantize_row_q3_K(row.data(), y.data(), blocks * 256);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t e = 0; e < 256; ++e) ASSERT_EQ(y[b * 256 + e], value_at(row, b, e)) << b << " " << e;
}

TEST(Q3KReference, DequantizeHandBlock) {
  std::vector<uint8_t> row(kBytes, 0);
  test::put_le16(&row[108], 0x3800);  // d = 0.5
  // Codes: sub-block 0 = 32 + 3 (0x23: low 3, high 2 at bits 0-1 of scales[8]);
  // sub-block 9 = 32 + 1 (0x21: low nibble 1 in the high nibble of scales[1],
  // high 2 at bits 4-5 of scales[9]); sub-block 12 = 32 - 6 (0x1a: low 0xa in
  // the high nibble of scales[4], high 1 at bits 6-7 of scales[8]).
  row[96 + 0] = 0x03;
  row[96 + 1] = 0x10;
  row[96 + 4] = 0xa0;
  row[96 + 8] = 0x02 | 0x01 << 6;
  row[96 + 9] = 0x02 << 4;
  // Every other code is 0: step -16.
  row[32 + 0] = 0x03;  // element 0: qs bits 3, hmask bit 0 clear: 3 - 4 = -1 (sub-block 0)
  row[0] = 0x01;       // ... then element 0's hmask bit set: 3
  row[32 + 32 + 20] = 0x02 << 2;  // element 128 + 32 + 20 = 180: bits 2-3 = 2 (sub-block 11, code 0)
  row[20] = 0x01 << 5;            // hmask bit 4 + 1 of byte 20: element 180 keeps 2
  row[32 + 32 + 4] = 0x01;        // element 128 + 4 = 132: 1 - 4 = -3 (sub-block 8, code 0)
  row[32 + 32 + 2] = 0x00;        // element 128 + 64 + 2 = 194 (sub-block 12): 0 - 4 = -4
  std::vector<float> y(256);
  dequantize_row_q3_K(row.data(), y.data(), 256);
  EXPECT_EQ(y[0], 0.5f * 3 * 3);
  EXPECT_EQ(y[1], 0.5f * 3 * -4);      // qs 0, hmask clear: -4
  EXPECT_EQ(y[144], 0.5f * 1 * -4);    // sub-block 9
  EXPECT_EQ(y[180], 0.5f * -32 * 2);   // sub-block 11: code 0
  EXPECT_EQ(y[132], 0.5f * -32 * -3);  // sub-block 8: code 0
  EXPECT_EQ(y[194], 0.5f * -6 * -4);   // sub-block 12
}

TEST(Q3KReference, RoundTripWithinHalfAStep) {
  Rng rng(622);
  const int64_t n = 256 * 40;
  auto x = test::random_normal(rng, n, 0.02f);
  for (int64_t i = 0; i < n; i += 97) x[i] *= 8.0f;             // outliers
  for (int64_t i = 256; i < 512; ++i) x[i] = std::fabs(x[i]);  // a block without negatives
  std::vector<uint8_t> row(n / 256 * kBytes);
  std::vector<float> y(n);
  quantize_row_q3_K(x.data(), row.data(), n);
  dequantize_row_q3_K(row.data(), y.data(), n);
  double e = 0, xx = 0;
  for (int64_t b = 0; b < n / 256; ++b)
    for (int s = 0; s < 16; ++s) {
      const double step = d_at(row, b) * (code_at(row, b, s) - 32);
      ASSERT_GE(step, 0.0) << "the quantizer writes codes of 32 and up";
      for (int l = 0; l < 16; ++l) {
        const int64_t i = b * 256 + 16 * s + l;
        ASSERT_LE(std::fabs(y[i] - x[i]), 0.5 * step + 1e-6) << i;
        e += (y[i] - x[i]) * (y[i] - x[i]);
        xx += static_cast<double>(x[i]) * x[i];
      }
    }
  EXPECT_LT(std::sqrt(e / xx), 0.3) << "relative rmse";
}

TEST(Q3KReference, QuantizeExtremes) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(256);
  const std::vector<float> zeros(256, 0.0f);
  quantize_row_q3_K(zeros.data(), row.data(), 256);
  dequantize_row_q3_K(row.data(), y.data(), 256);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  std::vector<float> huge(256, 1e9f);  // the scale stops at fp16's largest finite value
  huge[7] = -1e9f;
  quantize_row_q3_K(huge.data(), row.data(), 256);
  dequantize_row_q3_K(row.data(), y.data(), 256);
  for (float v : y) EXPECT_TRUE(std::isfinite(v));
  EXPECT_LT(y[7], 0.0f);
  EXPECT_GT(y[8], 0.0f);
}

TEST(Q3KReference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(512);
  EXPECT_THROW(dequantize_row_q3_K(row.data(), y.data(), 384), Error);
  EXPECT_THROW(quantize_row_q3_K(y.data(), row.data(), 128), Error);
}

}  // namespace
}  // namespace lowbit::q3_k_test
