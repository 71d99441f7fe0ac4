// Q4_K and Q5_K (llama.cpp's k-quants with sub-block mins): the layouts read
// again from their description, apart from the code under test, against
// dequantize on random blocks and hand-made ones; the plain quantizer's round
// trip; extremes; partial blocks refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant/q4_k.h"
#include "quant/q5_k.h"
#include "quant_test_util.h"

namespace lowbit::k_quant_test {
namespace {

using test::le_fp16;

struct KQuant {
  const char* name;
  int64_t bytes;  // per block of 256
  int bits;       // 4 (Q4_K: d, dmin, scales, qs[128]) or 5 (Q5_K: ... scales, qh[32], qs[128])
  void (*dequantize)(const uint8_t*, float*, int64_t);
  void (*quantize)(const float*, uint8_t*, int64_t);
};
const KQuant kFormats[] = {{"q4_K", 144, 4, dequantize_row_q4_K, quantize_row_q4_K},
                           {"q5_K", 176, 5, dequantize_row_q5_K, quantize_row_q5_K}};

// Bytes 4..15: sc[0..3] and m[0..3] in the low 6 bits of bytes 0..3 and 4..7;
// sc[4..7] / m[4..7] in the low / high nibbles of bytes 8..11, their top 2
// bits in the top bits of bytes 0..3 / 4..7.
int sc_at(const KQuant& f, const std::vector<uint8_t>& row, int64_t b, int j) {
  const uint8_t* s = &row[b * f.bytes + 4];
  return j < 4 ? s[j] % 64 : s[j + 4] % 16 + (s[j - 4] / 64) * 16;
}
int m_at(const KQuant& f, const std::vector<uint8_t>& row, int64_t b, int j) {
  const uint8_t* s = &row[b * f.bytes + 4];
  return j < 4 ? s[j + 4] % 64 : s[j + 4] / 16 + (s[j] / 64) * 16;
}
// Element e: its 64-element part p = e / 64 reads 32 bytes of qs, low nibbles
// for the first 32 elements, high for the next; Q5_K's bit 4 of sub-block
// j = e / 32 is bit j of qh[e % 32].
int q_at(const KQuant& f, const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const int64_t qs = f.bits == 4 ? 16 : 48;
  const uint8_t byte = row[b * f.bytes + qs + 32 * (e / 64) + e % 32];
  const int low = e % 64 < 32 ? byte % 16 : byte / 16;
  return f.bits == 4 ? low : low + 16 * ((row[b * f.bytes + 16 + e % 32] >> (e / 32)) & 1);
}
float value_at(const KQuant& f, const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const int j = static_cast<int>(e / 32);
  const float step = le_fp16(&row[b * f.bytes]) * static_cast<float>(sc_at(f, row, b, j));
  const float offset = le_fp16(&row[b * f.bytes + 2]) * static_cast<float>(m_at(f, row, b, j));
  return step * static_cast<float>(q_at(f, row, b, e)) - offset;
}

TEST(KQuantReference, DequantizeFollowsTheLayout) {
  Rng rng(601);
  const int64_t blocks = 7;
  for (const KQuant& f : kFormats) {
    auto row = test::random_bytes(rng, blocks * f.bytes);
    for (int64_t b = 0; b < blocks; ++b) {
      test::put_le16(&row[b * f.bytes], test::random_fp16_scale(rng));
      test::put_le16(&row[b * f.bytes + 2], test::random_fp16_scale(rng));
    }
    std::vector<float> y(blocks * 256);
    f.dequantize(row.data(), y.data(), blocks * 256);
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t e = 0; e < 256; ++e) ASSERT_EQ(y[b * 256 + e], value_at(f, row, b, e)) << f.name << " " << b << " " << e;
  }
}

TEST(KQuantReference, DequantizeHandBlocks) {
  std::vector<uint8_t> row(144, 0);  // Q4_K
  test::put_le16(&row[0], 0x3c00);   // d = 1
  test::put_le16(&row[2], 0x3800);   // dmin = 0.5
  row[4 + 0] = 0xc3;                 // sc[0] = 3; top bits 3 -> sc[4] high part 48
  row[4 + 4] = 0x45;                 // m[0] = 5; top bits 1 -> m[4] high part 16
  row[4 + 8] = 0x72;                 // sc[4] = 48 + 2 = 50, m[4] = 16 + 7 = 23
  row[16 + 0] = 0x9f;                // element 0: 15 (sub-block 0), element 32: 9 (sub-block 1)
  row[16 + 64 + 1] = 0x04;           // element 129: 4 (sub-block 4)
  std::vector<float> y(256);
  dequantize_row_q4_K(row.data(), y.data(), 256);
  EXPECT_EQ(y[0], 3.0f * 15 - 2.5f);
  EXPECT_EQ(y[1], -2.5f);  // q = 0: the min alone
  EXPECT_EQ(y[32], 0.0f);  // sub-block 1: sc = m = 0
  EXPECT_EQ(y[129], 50.0f * 4 - 11.5f);
  EXPECT_EQ(y[128], -11.5f);

  std::vector<uint8_t> q5(176, 0);  // Q5_K
  test::put_le16(&q5[0], 0x3c00);   // d = 1
  test::put_le16(&q5[2], 0x3800);   // dmin = 0.5
  q5[4 + 0] = 2;                    // sc[0] = 2
  q5[4 + 1] = 1;                    // sc[1] = 1
  q5[4 + 5] = 6;                    // m[1] = 6
  q5[48 + 0] = 0x37;                // element 0: 7, element 32: 3
  q5[16 + 0] = 0x03;                // bit 4 of element 0 (sub-block 0) and of element 32 (sub-block 1)
  dequantize_row_q5_K(q5.data(), y.data(), 256);
  EXPECT_EQ(y[0], 2.0f * 23);
  EXPECT_EQ(y[32], 1.0f * 19 - 3.0f);
  EXPECT_EQ(y[33], -3.0f);
}

TEST(KQuantReference, RoundTripWithinAStepOfEachSubBlock) {
  for (const KQuant& f : kFormats) {
    Rng rng(602);
    const int64_t n = 256 * 40;
    auto x = test::random_normal(rng, n, 0.02f);
    for (int64_t i = 0; i < n; i += 97) x[i] *= 8.0f;             // outliers
    for (int64_t i = 256; i < 512; ++i) x[i] = std::fabs(x[i]);  // a block without negatives: mins of 0
    std::vector<uint8_t> row(n / 256 * f.bytes);
    std::vector<float> y(n);
    f.quantize(x.data(), row.data(), n);
    f.dequantize(row.data(), y.data(), n);
    double e = 0, xx = 0;
    for (int64_t b = 0; b < n / 256; ++b)
      for (int j = 0; j < 8; ++j) {
        const double step = le_fp16(&row[b * f.bytes]) * sc_at(f, row, b, j);
        for (int l = 0; l < 32; ++l) {
          const int64_t i = b * 256 + 32 * j + l;
          // Half a step, plus the min's rounding to a multiple of dmin (half of it).
          ASSERT_LE(std::fabs(y[i] - x[i]), 0.5 * step + 0.5 * le_fp16(&row[b * f.bytes + 2]) + 1e-6) << f.name << " " << i;
          e += (y[i] - x[i]) * (y[i] - x[i]);
          xx += static_cast<double>(x[i]) * x[i];
        }
      }
    EXPECT_LT(std::sqrt(e / xx), f.bits == 4 ? 0.15 : 0.08) << f.name << " relative rmse";
  }
}

TEST(KQuantReference, QuantizeExtremes) {
  for (const KQuant& f : kFormats) {
    std::vector<uint8_t> row(static_cast<size_t>(f.bytes));
    std::vector<float> y(256);
    const std::vector<float> zeros(256, 0.0f);
    f.quantize(zeros.data(), row.data(), 256);
    f.dequantize(row.data(), y.data(), 256);
    for (float v : y) EXPECT_EQ(v, 0.0f) << f.name;
    const std::vector<float> huge(256, 1e9f);  // the scales stop at fp16's largest finite value
    f.quantize(huge.data(), row.data(), 256);
    f.dequantize(row.data(), y.data(), 256);
    for (float v : y) EXPECT_TRUE(std::isfinite(v)) << f.name;
  }
}

TEST(KQuantReference, RejectsPartialBlocks) {
  for (const KQuant& f : kFormats) {
    std::vector<uint8_t> row(static_cast<size_t>(2 * f.bytes));
    std::vector<float> y(512);
    EXPECT_THROW(f.dequantize(row.data(), y.data(), 384), Error) << f.name;
    EXPECT_THROW(f.quantize(y.data(), row.data(), 128), Error) << f.name;
  }
}

}  // namespace
}  // namespace lowbit::k_quant_test
