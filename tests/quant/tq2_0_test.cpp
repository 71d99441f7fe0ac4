#include "quant/tq2_0.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant_test_util.h"
#include "scaled_block_checks.h"

namespace lowbit::tq2_0_test {
namespace {

using test::le_fp16;

constexpr int64_t kBytes = 66;  // qs[64], then fp16 d

float d_at(const std::vector<uint8_t>& row, int64_t b) { return le_fp16(&row[b * kBytes + 64]); }
// Element e of a block: byte (e / 128) * 32 + e % 32, bits 2 * ((e % 128) / 32); value = code - 1.
int value_at(const std::vector<uint8_t>& row, int64_t b, int64_t e) {
  const uint8_t byte = row[b * kBytes + (e / 128) * 32 + e % 32];
  return ((byte >> (2 * ((e % 128) / 32))) & 3) - 1;
}
void set_code(std::vector<uint8_t>& row, int64_t b, int64_t e, int code) {
  row[b * kBytes + (e / 128) * 32 + e % 32] |= static_cast<uint8_t>(code << (2 * ((e % 128) / 32)));
}

std::vector<uint8_t> random_row(Rng& rng, int64_t blocks) {
  auto row = test::random_bytes(rng, blocks * kBytes);
  for (int64_t b = 0; b < blocks; ++b) test::put_le16(&row[b * kBytes + 64], test::random_fp16_scale(rng));
  return row;
}

TEST(TQ2_0Reference, DequantizeFollowsLlamaCppLayout) {
  Rng rng(201);
  const int64_t blocks = 5;
  const auto row = random_row(rng, blocks);
  std::vector<float> y(blocks * 256);
  dequantize_row_tq2_0(row.data(), y.data(), blocks * 256);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t e = 0; e < 256; ++e)
      ASSERT_EQ(y[b * 256 + e], static_cast<float>(static_cast<double>(d_at(row, b)) * value_at(row, b, e)))
          << b << " " << e;
}

TEST(TQ2_0Reference, DequantizeHandBlock) {
  std::vector<uint8_t> row(kBytes, 0x55);  // every code 1: value 0
  test::put_le16(&row[64], 0x3c00);        // d = 1
  row[0] = 0x56;                           // element 0 -> code 2 (+1)
  row[33] = 0x15;                          // element 128 + 96 + 1 = 225 -> code 0 (-1)
  std::vector<float> y(256);
  dequantize_row_tq2_0(row.data(), y.data(), 256);
  for (int e = 0; e < 256; ++e) EXPECT_EQ(y[e], e == 0 ? 1.0f : e == 225 ? -1.0f : 0.0f) << e;
}

// Ternary input times a per-block d: llama.cpp's quantizer writes exactly the
// codes the layout prescribes, and dequantization gives the input back.
TEST(TQ2_0Reference, PackThenUnpackIsExact) {
  Rng rng(202);
  const int64_t blocks = 6;
  std::vector<float> x(blocks * 256);
  std::vector<uint8_t> expect(blocks * kBytes, 0);
  const float scales[blocks] = {1.0f, 0.0137f, 65504.0f, 6.1035156e-5f /* 2^-14 */, 5.9604645e-8f /* 2^-24 */, 3.0f};
  for (int64_t b = 0; b < blocks; ++b) {
    auto t = test::random_ternary(rng, 256);
    t[7] = 1;  // the block's max|x| is d
    const float d = fp16_to_float(float_to_fp16(scales[b]));
    for (int64_t e = 0; e < 256; ++e) {
      x[b * 256 + e] = t[e] * d;
      set_code(expect, b, e, t[e] + 1);
    }
    test::put_le16(&expect[b * kBytes + 64], float_to_fp16(d));
  }
  std::vector<uint8_t> row(blocks * kBytes);
  quantize_row_tq2_0(x.data(), row.data(), blocks * 256);
  EXPECT_EQ(row, expect);
  std::vector<float> y(x.size());
  dequantize_row_tq2_0(row.data(), y.data(), blocks * 256);
  EXPECT_EQ(y, x);
}

TEST(TQ2_0Reference, UniformBlocks) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(256);
  for (float v : {1.0f, -1.0f, 0.0f, -65504.0f}) {
    const std::vector<float> x(256, v);
    quantize_row_tq2_0(x.data(), row.data(), 256);
    dequantize_row_tq2_0(row.data(), y.data(), 256);
    EXPECT_EQ(y, x) << v;
    for (int64_t e = 0; e < 256; ++e) ASSERT_EQ(value_at(row, 0, e), v > 0 ? 1 : v < 0 ? -1 : 0) << v;
  }
}

const test::ScaledBlockFormat kTQ20{256, kBytes, d_at, value_at, random_row, quantize_row_tq2_0, dot_i8_tq2_0};

TEST(TQ2_0Reference, QuantizeRoundsRatioToNearestTrit) { test::expect_quantize_rounds_ratio_to_nearest_trit(kTQ20, 203); }

TEST(TQ2_0Reference, DotIsBlockScaledIntegerSums) {
  test::expect_dot_is_block_scaled_integer_sums(kTQ20, {1, 3, 11}, 204);
}

TEST(TQ2_0Reference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(2 * kBytes);
  std::vector<float> y(512);
  EXPECT_THROW(dequantize_row_tq2_0(row.data(), y.data(), 128), Error);
  EXPECT_THROW(quantize_row_tq2_0(y.data(), row.data(), 384), Error);
}

}  // namespace
}  // namespace lowbit::tq2_0_test
