// Q2_K (llama.cpp's 2-bit k-quant): the layout read again from its
// description, apart from the code under test, against dequantize on random
// blocks and a hand-made one; the plain quantizer's round trip; extremes;
// partial blocks refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant/q2_k.h"
#include "quant_test_util.h"

namespace lowbit::q2_k_test {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 84;  // scales[16], qs[64], d, dmin

// Sub-block s (16 elements) has its step code in the low nibble of byte s and
// its min code in the high one.
int sc_at(const std::vector<uint8_t>& row, int64_t b, int s) { return row[b * kBytes + s] % 16; }
int m_at(const std::vector<uint8_t>& row, int64_t b, int s) { return row[b * kBytes + s] / 16; }
// Element e: half h = e / 128 reads qs[32h .. 32h + 31]; within it the
// element's 32-group j = (e % 128) / 32 is bits 2j..2j+1 of byte e % 32.
int q_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const uint8_t byte = row[b * kBytes + 16 + 32 * (e / 128) + e % 32];
  return (byte >> (2 * ((e % 128) / 32))) % 4;
}
float d_at(const std::vector<uint8_t>& row, int64_t b) { return le_fp16(&row[b * kBytes + 80]); }
float dmin_at(const std::vector<uint8_t>& row, int64_t b) { return le_fp16(&row[b * kBytes + 82]); }
float value_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const int s = static_cast<int>(e / 16);
  const float step = d_at(row, b) * static_cast<float>(sc_at(row, b, s));
  const float offset = dmin_at(row, b) * static_cast<float>(m_at(row, b, s));
  return step * static_cast<float>(q_at(row, b, e)) - offset;
}

TEST(Q2KReference, DequantizeFollowsTheLayout) {
  Rng rng(611);
  const int64_t blocks = 7;
  auto row = test::random_bytes(rng, blocks * kBytes);
  for (int64_t b = 0; b < blocks; ++b) {
    test::put_le16(&row[b * kBytes + 80], test::random_fp16_scale(rng));
    test::put_le16(&row[b * kBytes + 82], test::random_fp16_scale(rng));
  }
  std::vector<float> y(blocks * 256);
  dequantize_row_q2_K(row.data(), y.data(), blocks * 256);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t e = 0; e < 256; ++e) ASSERT_EQ(y[b * 256 + e], value_at(row, b, e)) << b << " " << e;
}

TEST(Q2KReference, DequantizeHandBlock) {
  std::vector<uint8_t> row(kBytes, 0);
  test::put_le16(&row[80], 0x3c00);  // d = 1
  test::put_le16(&row[82], 0x3800);  // dmin = 0.5
  row[0] = 0x53;                     // sub-block 0: step 3, min 5 * 0.5
  row[3] = 0x07;                     // sub-block 3 (elements 48..63): step 7, min 0
  row[9] = 0x21;                     // sub-block 9 (elements 144..159): step 1, min 2 * 0.5
  row[16 + 0] = 0x03;                // element 0: 3 (bits 0-1 of qs[0])
  row[16 + 17] = 0x40;               // element 32 * 3 + 17 = 113: 1 (bits 6-7 of qs[17]): sub-block 7, all zero
  row[16 + 16] = 0x80;               // element 96 + 16 = 112: 2, sub-block 7 too
  row[16 + 32 + 16] = 0x04;          // element 128 + 32 + 16 = 176: 1 (bits 2-3 of qs[48]): sub-block 11
  row[16 + 32 + 20] = 0x08;          // element 128 + 32 + 20 = 180: 2, sub-block 11
  row[11] = 0x12;                    // sub-block 11: step 2, min 0.5
  row[16 + 16 + 0] = 0x0c;           // element 32 + 16 = 48: 3 (bits 2-3 of qs[16]), sub-block 3
  std::vector<float> y(256);
  dequantize_row_q2_K(row.data(), y.data(), 256);
  EXPECT_EQ(y[0], 3.0f * 3 - 2.5f);
  EXPECT_EQ(y[1], -2.5f);  // q = 0: the min alone
  EXPECT_EQ(y[48], 7.0f * 3);
  EXPECT_EQ(y[112], 0.0f);
  EXPECT_EQ(y[113], 0.0f);
  EXPECT_EQ(y[144], -1.0f);
  EXPECT_EQ(y[176], 2.0f * 1 - 0.5f);
  EXPECT_EQ(y[180], 2.0f * 2 - 0.5f);
}

TEST(Q2KReference, RoundTripWithinAStepOfEachSubBlock) {
  Rng rng(612);
  const int64_t n = 256 * 40;
  auto x = test::random_normal(rng, n, 0.02f);
  for (int64_t i = 0; i < n; i += 97) x[i] *= 8.0f;             // outliers
  for (int64_t i = 256; i < 512; ++i) x[i] = std::fabs(x[i]);  // a block without negatives: mins of 0
  std::vector<uint8_t> row(n / 256 * kBytes);
  std::vector<float> y(n);
  quantize_row_q2_K(x.data(), row.data(), n);
  dequantize_row_q2_K(row.data(), y.data(), n);
  double e = 0, xx = 0;
  for (int64_t b = 0; b < n / 256; ++b)
    for (int s = 0; s < 16; ++s) {
      const double step = d_at(row, b) * sc_at(row, b, s);
      for (int l = 0; l < 16; ++l) {
        const int64_t i = b * 256 + 16 * s + l;
        // Half a step, plus the min's rounding to a multiple of dmin (half of it).
        ASSERT_LE(std::fabs(y[i] - x[i]), 0.5 * step + 0.5 * dmin_at(row, b) + 1e-6) << i;
        e += (y[i] - x[i]) * (y[i] - x[i]);
        xx += static_cast<double>(x[i]) * x[i];
      }
    }
  EXPECT_LT(std::sqrt(e / xx), 0.5) << "relative rmse";
}

TEST(Q2KReference, QuantizeExtremes) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(256);
  const std::vector<float> zeros(256, 0.0f);
  quantize_row_q2_K(zeros.data(), row.data(), 256);
  dequantize_row_q2_K(row.data(), y.data(), 256);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  const std::vector<float> huge(256, 1e9f);  // the scales stop at fp16's largest finite value
  quantize_row_q2_K(huge.data(), row.data(), 256);
  dequantize_row_q2_K(row.data(), y.data(), 256);
  for (float v : y) EXPECT_TRUE(std::isfinite(v));
}

TEST(Q2KReference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(512);
  EXPECT_THROW(dequantize_row_q2_K(row.data(), y.data(), 384), Error);
  EXPECT_THROW(quantize_row_q2_K(y.data(), row.data(), 128), Error);
}

}  // namespace
}  // namespace lowbit::q2_k_test
