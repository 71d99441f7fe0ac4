#include "quant/q4_k.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant_test_util.h"

namespace lowbit {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 144;  // d, dmin, 12 bytes of scales and mins, 128 bytes of nibbles

// The layout read again from its description (llama.cpp's block_q4_K), apart
// from the code under test: bytes 4..15 hold sc[0..3] and m[0..3] in the low 6
// bits of bytes 0..3 and 4..7, and sc[4..7] / m[4..7] in the low / high
// nibbles of bytes 8..11 with their top 2 bits in the top bits of bytes 0..3 / 4..7.
int sc_at(const std::vector<uint8_t>& row, int64_t b, int j) {
  const uint8_t* s = &row[b * kBytes + 4];
  return j < 4 ? s[j] % 64 : s[j + 4] % 16 + (s[j - 4] / 64) * 16;
}
int m_at(const std::vector<uint8_t>& row, int64_t b, int j) {
  const uint8_t* s = &row[b * kBytes + 4];
  return j < 4 ? s[j + 4] % 64 : s[j + 4] / 16 + (s[j] / 64) * 16;
}
// Element e: 64-element part p = e / 64 reads the 32 bytes at 16 + 32p, low
// nibbles for its first 32 elements, high for the next 32.
int q_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const uint8_t byte = row[b * kBytes + 16 + 32 * (e / 64) + e % 32];
  return e % 64 < 32 ? byte % 16 : byte / 16;
}
float value_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const int j = static_cast<int>(e / 32);
  const float step = le_fp16(&row[b * kBytes]) * static_cast<float>(sc_at(row, b, j));
  const float offset = le_fp16(&row[b * kBytes + 2]) * static_cast<float>(m_at(row, b, j));
  return step * static_cast<float>(q_at(row, b, e)) - offset;
}

std::vector<uint8_t> random_row(Rng& rng, int64_t blocks) {
  auto row = test::random_bytes(rng, blocks * kBytes);
  for (int64_t b = 0; b < blocks; ++b) {
    test::put_le16(&row[b * kBytes], test::random_fp16_scale(rng));
    test::put_le16(&row[b * kBytes + 2], test::random_fp16_scale(rng));
  }
  return row;
}

TEST(Q4_KReference, DequantizeFollowsTheLayout) {
  Rng rng(601);
  const int64_t blocks = 7;
  const auto row = random_row(rng, blocks);
  std::vector<float> y(blocks * 256);
  dequantize_row_q4_K(row.data(), y.data(), blocks * 256);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t e = 0; e < 256; ++e) ASSERT_EQ(y[b * 256 + e], value_at(row, b, e)) << b << " " << e;
}

TEST(Q4_KReference, DequantizeHandBlock) {
  std::vector<uint8_t> row(kBytes, 0);
  test::put_le16(&row[0], 0x3c00);  // d = 1
  test::put_le16(&row[2], 0x3800);  // dmin = 0.5
  row[4 + 0] = 0xc3;                // sc[0] = 3; top bits 3 -> sc[4] high part 48
  row[4 + 4] = 0x45;                // m[0] = 5; top bits 1 -> m[4] high part 16
  row[4 + 8] = 0x72;                // sc[4] = 48 + 2 = 50, m[4] = 16 + 7 = 23
  row[16 + 0] = 0x9f;               // element 0: 15 (sub-block 0), element 32: 9 (sub-block 1)
  row[16 + 64 + 1] = 0x04;          // element 129: 4 (sub-block 4)
  std::vector<float> y(256);
  dequantize_row_q4_K(row.data(), y.data(), 256);
  EXPECT_EQ(y[0], 3.0f * 15 - 2.5f);
  EXPECT_EQ(y[1], -2.5f);            // q = 0: the min alone
  EXPECT_EQ(y[32], 0.0f);            // sub-block 1: sc = m = 0
  EXPECT_EQ(y[129], 50.0f * 4 - 11.5f);
  EXPECT_EQ(y[128], -11.5f);
}

TEST(Q4_KReference, RoundTripWithinAStepOfEachSubBlock) {
  Rng rng(602);
  const int64_t n = 256 * 40;
  auto x = test::random_normal(rng, n, 0.02f);
  for (int64_t i = 0; i < n; i += 97) x[i] *= 8.0f;  // outliers
  for (int64_t i = 256; i < 512; ++i) x[i] = std::fabs(x[i]);  // a block without negatives: mins of 0
  std::vector<uint8_t> row(n / 256 * kBytes);
  std::vector<float> y(n);
  quantize_row_q4_K(x.data(), row.data(), n);
  dequantize_row_q4_K(row.data(), y.data(), n);
  double e = 0, xx = 0;
  for (int64_t b = 0; b < n / 256; ++b)
    for (int j = 0; j < 8; ++j) {
      const double step = le_fp16(&row[b * kBytes]) * sc_at(row, b, j);
      for (int l = 0; l < 32; ++l) {
        const int64_t i = b * 256 + 32 * j + l;
        // Half a step, plus the min's rounding to a multiple of dmin (half of it).
        ASSERT_LE(std::fabs(y[i] - x[i]), 0.5 * step + 0.5 * le_fp16(&row[b * kBytes + 2]) + 1e-6) << i;
        e += (y[i] - x[i]) * (y[i] - x[i]);
        xx += static_cast<double>(x[i]) * x[i];
      }
    }
  EXPECT_LT(std::sqrt(e / xx), 0.15) << "relative rmse";
}

TEST(Q4_KReference, QuantizeExtremes) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(256);
  const std::vector<float> zeros(256, 0.0f);
  quantize_row_q4_K(zeros.data(), row.data(), 256);
  dequantize_row_q4_K(row.data(), y.data(), 256);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  const std::vector<float> huge(256, 1e9f);  // the scales stop at fp16's largest finite value
  quantize_row_q4_K(huge.data(), row.data(), 256);
  dequantize_row_q4_K(row.data(), y.data(), 256);
  for (float v : y) EXPECT_TRUE(std::isfinite(v));
}

TEST(Q4_KReference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(512);
  EXPECT_THROW(dequantize_row_q4_K(row.data(), y.data(), 384), Error);
  EXPECT_THROW(quantize_row_q4_K(y.data(), row.data(), 128), Error);
}

}  // namespace
}  // namespace lowbit
