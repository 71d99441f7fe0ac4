#include "quant/i2s.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/error.h"
#include "quant_test_util.h"

namespace lowbit::i2s_test {
namespace {

// formats.md: weight j of 128-weight block i is in byte 32*i + j % 32 at bit
// 6 - 2*(j / 32); code = t + 1.
int code_at(const std::vector<uint8_t>& bytes, int64_t w) {
  const int64_t j = w % 128;
  return (bytes[(w / 128) * 32 + j % 32] >> (6 - 2 * (j / 32))) & 3;
}

TEST(I2SReference, DequantizeReadsUnscaledCodes) {
  Rng rng(361);
  const int64_t n = 128 * 5;
  const auto row = test::random_bytes(rng, n / 4);  // includes code 3, read as +2
  std::vector<float> y(n);
  dequantize_row_i2s(row.data(), y.data(), n);
  std::vector<int8_t> t(n);
  unpack_i2s(row.data(), n, t.data());
  std::vector<uint8_t> codes(n);
  unpack_i2s_codes(row.data(), n, codes.data());
  for (int64_t w = 0; w < n; ++w) {
    ASSERT_EQ(y[w], code_at(row, w) - 1) << w;
    ASSERT_EQ(t[w], code_at(row, w) - 1) << w;
    ASSERT_EQ(codes[w], code_at(row, w)) << w;
  }
}

TEST(I2SReference, HandBlock) {
  std::vector<uint8_t> row(32, 0x55);  // every code 1: 0
  row[0] = 0x95;                       // weight 0 -> code 2 (+1)
  row[31] = 0x54;                      // weight 96 + 31 = 127 -> code 0 (-1)
  std::vector<int8_t> t(128);
  unpack_i2s(row.data(), 128, t.data());
  for (int w = 0; w < 128; ++w) EXPECT_EQ(t[w], w == 0 ? 1 : w == 127 ? -1 : 0) << w;
}

TEST(I2SReference, PackThenUnpackIsExact) {
  Rng rng(362);
  for (int64_t n : {128, 128 * 3, 128 * 40}) {
    const auto t = test::random_ternary(rng, n);
    std::vector<uint8_t> packed(n / 4 + 32, 0xee);
    pack_i2s(t.data(), n, 0.0371f, packed.data());
    for (int64_t w = 0; w < n; ++w) ASSERT_EQ(code_at(packed, w), t[w] + 1) << n << " " << w;
    float scale;
    std::memcpy(&scale, &packed[n / 4], 4);
    EXPECT_EQ(scale, 0.0371f);
    EXPECT_EQ(i2s_tensor_scale(packed.data(), n), 0.0371f);
    for (int64_t i = n / 4 + 4; i < n / 4 + 32; ++i) EXPECT_EQ(packed[i], 0) << i;
    std::vector<int8_t> back(n);
    unpack_i2s(packed.data(), n, back.data());
    EXPECT_EQ(back, t);
  }
}

TEST(I2SReference, UniformTensors) {
  for (int v : {1, -1, 0}) {
    const std::vector<int8_t> t(256, static_cast<int8_t>(v));
    std::vector<uint8_t> packed(256 / 4 + 32);
    pack_i2s(t.data(), 256, 1.0f, packed.data());
    for (int i = 0; i < 64; ++i) ASSERT_EQ(packed[i], v == 1 ? 0xaa : v == -1 ? 0x00 : 0x55) << v;
  }
}

TEST(I2SReference, PackRejectsNonTernaryAndPartialBlocks) {
  std::vector<int8_t> t(128, 0);
  std::vector<uint8_t> packed(128 / 4 + 32);
  t[77] = 2;
  EXPECT_THROW(pack_i2s(t.data(), 128, 1.0f, packed.data()), Error);
  t[77] = 0;
  EXPECT_THROW(pack_i2s(t.data(), 64, 1.0f, packed.data()), Error);
  EXPECT_THROW(unpack_i2s(packed.data(), 100, t.data()), Error);
  std::vector<uint8_t> codes(128);
  EXPECT_THROW(unpack_i2s_codes(packed.data(), 100, codes.data()), Error);
}

// bitnet.cpp's quantize_i2_s: |x| < 1e-6 is 0, anything else its sign.
TEST(I2SReference, QuantizeRowTakesSignsWithDeadZone) {
  Rng rng(363);
  const int64_t n = 128 * 4;
  auto x = test::random_normal(rng, n);
  x[0] = 0.0f, x[1] = -0.0f, x[2] = 9.9e-7f, x[3] = -9.9e-7f, x[4] = 1.1e-6f, x[5] = -1.1e-6f, x[6] = 3e38f;
  std::vector<uint8_t> row(n / 4);
  quantize_row_i2s(x.data(), row.data(), n);
  for (int64_t w = 0; w < n; ++w) {
    const int expect = std::fabs(x[w]) < 1e-6 ? 0 : x[w] > 0 ? 1 : -1;
    ASSERT_EQ(code_at(row, w) - 1, expect) << w;
  }
}

TEST(I2SReference, IntegerDotIsExact) {
  Rng rng(364);
  for (int64_t n : {128, 128 * 7, 128 * 64}) {
    const auto t = test::random_ternary(rng, n);
    std::vector<uint8_t> packed(n / 4 + 32);
    pack_i2s(t.data(), n, 1.0f, packed.data());
    for (int pattern = 0; pattern < 3; ++pattern) {
      const std::vector<int8_t> q =
          pattern == 0 ? test::random_int8(rng, n) : std::vector<int8_t>(n, pattern == 1 ? 127 : -128);
      int64_t expect = 0;
      for (int64_t w = 0; w < n; ++w) expect += static_cast<int64_t>(t[w]) * q[w];
      EXPECT_EQ(dot_i2s_int(packed.data(), q.data(), n), expect) << n << " " << pattern;
      EXPECT_EQ(dot_i8_i2s(packed.data(), q.data(), n), static_cast<float>(expect)) << n << " " << pattern;
    }
  }
}

// The largest sums a row can reach stay exact: all +1 against all -128.
TEST(I2SReference, IntegerDotExtremes) {
  const int64_t n = 128 * 1024;
  for (int v : {1, -1}) {
    const std::vector<int8_t> t(n, static_cast<int8_t>(v));
    std::vector<uint8_t> packed(n / 4 + 32);
    pack_i2s(t.data(), n, 1.0f, packed.data());
    const std::vector<int8_t> lo(n, -128), hi(n, 127);
    EXPECT_EQ(dot_i2s_int(packed.data(), lo.data(), n), -128 * v * n);
    EXPECT_EQ(dot_i2s_int(packed.data(), hi.data(), n), 127 * v * n);
  }
}

// A row of a tensor starts at row_index * row_length / 4: the row functions
// see only whole blocks of the tensor's flat layout.
TEST(I2SReference, RowsAreSlicesOfTheTensorLayout) {
  Rng rng(365);
  const int64_t rows = 3, cols = 384;
  const auto t = test::random_ternary(rng, rows * cols);
  std::vector<uint8_t> packed(rows * cols / 4 + 32);
  pack_i2s(t.data(), rows * cols, 0.5f, packed.data());
  std::vector<float> y(cols);
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row_i2s(packed.data() + r * cols / 4, y.data(), cols);
    for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(y[c], t[r * cols + c]) << r << " " << c;
  }
}

}  // namespace
}  // namespace lowbit::i2s_test
