#include "quant/q5_k.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant_test_util.h"

namespace lowbit {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 176;  // d, dmin, 12 bytes of scales and mins, qh[32], qs[128]

// The layout read again from its description (llama.cpp's block_q5_K), apart
// from the code under test; the scales and mins are packed as Q4_K's.
int sc_at(const std::vector<uint8_t>& row, int64_t b, int j) {
  const uint8_t* s = &row[b * kBytes + 4];
  return j < 4 ? s[j] % 64 : s[j + 4] % 16 + (s[j - 4] / 64) * 16;
}
int m_at(const std::vector<uint8_t>& row, int64_t b, int j) {
  const uint8_t* s = &row[b * kBytes + 4];
  return j < 4 ? s[j + 4] % 64 : s[j + 4] / 16 + (s[j] / 64) * 16;
}
// Element e of sub-block j = e / 32: bits 0-3 from qs (64-element part p =
// e / 64 at 48 + 32p, low nibbles first), bit 4 = bit j of qh[e % 32].
int q_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const uint8_t byte = row[b * kBytes + 48 + 32 * (e / 64) + e % 32];
  const int low = e % 64 < 32 ? byte % 16 : byte / 16;
  const int high = (row[b * kBytes + 16 + e % 32] >> (e / 32)) & 1;
  return low + 16 * high;
}
float value_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const int j = static_cast<int>(e / 32);
  const float step = le_fp16(&row[b * kBytes]) * static_cast<float>(sc_at(row, b, j));
  const float offset = le_fp16(&row[b * kBytes + 2]) * static_cast<float>(m_at(row, b, j));
  return step * static_cast<float>(q_at(row, b, e)) - offset;
}

TEST(Q5_KReference, DequantizeFollowsTheLayout) {
  Rng rng(701);
  const int64_t blocks = 7;
  auto row = test::random_bytes(rng, blocks * kBytes);
  for (int64_t b = 0; b < blocks; ++b) {
    test::put_le16(&row[b * kBytes], test::random_fp16_scale(rng));
    test::put_le16(&row[b * kBytes + 2], test::random_fp16_scale(rng));
  }
  std::vector<float> y(blocks * 256);
  dequantize_row_q5_K(row.data(), y.data(), blocks * 256);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t e = 0; e < 256; ++e) ASSERT_EQ(y[b * 256 + e], value_at(row, b, e)) << b << " " << e;
}

TEST(Q5_KReference, DequantizeHandBlock) {
  std::vector<uint8_t> row(kBytes, 0);
  test::put_le16(&row[0], 0x3c00);  // d = 1
  test::put_le16(&row[2], 0x3800);  // dmin = 0.5
  row[4 + 0] = 2;                   // sc[0] = 2
  row[4 + 5] = 6;                   // m[1] = 6
  row[4 + 1] = 1;                   // sc[1] = 1
  row[48 + 0] = 0x37;               // element 0: 7, element 32: 3
  row[16 + 0] = 0x03;               // bit 4 of element 0 (sub-block 0) and of element 32 (sub-block 1)
  std::vector<float> y(256);
  dequantize_row_q5_K(row.data(), y.data(), 256);
  EXPECT_EQ(y[0], 2.0f * 23);
  EXPECT_EQ(y[32], 1.0f * 19 - 3.0f);
  EXPECT_EQ(y[33], -3.0f);
}

TEST(Q5_KReference, RoundTripWithinAStepOfEachSubBlock) {
  Rng rng(702);
  const int64_t n = 256 * 40;
  auto x = test::random_normal(rng, n, 0.02f);
  for (int64_t i = 0; i < n; i += 97) x[i] *= 8.0f;
  std::vector<uint8_t> row(n / 256 * kBytes);
  std::vector<float> y(n);
  quantize_row_q5_K(x.data(), row.data(), n);
  dequantize_row_q5_K(row.data(), y.data(), n);
  double e = 0, xx = 0;
  for (int64_t b = 0; b < n / 256; ++b)
    for (int j = 0; j < 8; ++j) {
      const double step = le_fp16(&row[b * kBytes]) * sc_at(row, b, j);
      for (int l = 0; l < 32; ++l) {
        const int64_t i = b * 256 + 32 * j + l;
        ASSERT_LE(std::fabs(y[i] - x[i]), 0.5 * step + 0.5 * le_fp16(&row[b * kBytes + 2]) + 1e-6) << i;
        e += (y[i] - x[i]) * (y[i] - x[i]);
        xx += static_cast<double>(x[i]) * x[i];
      }
    }
  EXPECT_LT(std::sqrt(e / xx), 0.08) << "relative rmse";
}

TEST(Q5_KReference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(512);
  EXPECT_THROW(dequantize_row_q5_K(row.data(), y.data(), 384), Error);
  EXPECT_THROW(quantize_row_q5_K(y.data(), row.data(), 128), Error);
}

}  // namespace
}  // namespace lowbit
