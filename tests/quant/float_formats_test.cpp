#include "quant/float_formats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "quant_test_util.h"

namespace lowbit::float_formats_test {
namespace {

TEST(F32Reference, RoundTripIsBitExact) {
  Rng rng(32);
  auto x = test::random_normal(rng, 67, 1e3f);
  x[0] = std::numeric_limits<float>::max(), x[1] = -std::numeric_limits<float>::denorm_min(), x[2] = -0.0f;
  std::vector<uint8_t> row(x.size() * 4 + 1);
  quantize_row_f32(x.data(), row.data() + 1, 67);  // unaligned on purpose
  EXPECT_EQ(std::memcmp(row.data() + 1, x.data(), x.size() * 4), 0);
  std::vector<float> y(x.size());
  dequantize_row_f32(row.data() + 1, y.data(), 67);
  EXPECT_EQ(std::memcmp(y.data(), x.data(), x.size() * 4), 0);
}

// Every fp16 bit pattern decodes to sign * 2^(e-15) * (1 + m/1024), or the
// subnormal m * 2^-24; writing rounds to the nearest fp16, ties to even.
TEST(F16Reference, DequantizeEveryBitPattern) {
  std::vector<uint8_t> row(65536 * 2);
  for (uint32_t h = 0; h < 65536; ++h) test::put_le16(&row[2 * h], static_cast<uint16_t>(h));
  std::vector<float> y(65536);
  dequantize_row_f16(row.data(), y.data(), 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const double sign = h & 0x8000 ? -1 : 1;
    if (e == 31) {
      ASSERT_TRUE(m ? std::isnan(y[h]) : y[h] == sign * INFINITY) << h;
      continue;
    }
    const double v = e == 0 ? sign * std::ldexp(m, -24) : sign * std::ldexp(1024 + m, e - 25);
    ASSERT_EQ(y[h], v) << h;
    ASSERT_EQ(std::signbit(y[h]), sign < 0) << h;
  }
}

TEST(F16Reference, QuantizeRoundsToNearestEven) {
  const std::vector<float> x = {1.0f + 1.0f / 2048,  // tie: down to even 1.0
                                1.0f + 3.0f / 2048,  // tie: up to even
                                65519.0f,            // largest value rounding to 65504
                                65520.0f,            // overflows to inf
                                -2.9802322e-8f,      // half the smallest subnormal: tie to 0
                                4.4703484e-8f,       // 0.75 of it: rounds up to 2^-24
                                0.1f};
  std::vector<uint8_t> row(x.size() * 2);
  quantize_row_f16(x.data(), row.data(), static_cast<int64_t>(x.size()));
  const uint16_t expect[] = {0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x8000, 0x0001, 0x2e66};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(test::le16(&row[2 * i]), expect[i]) << i;
}

TEST(F16Reference, RoundTripErrorWithinHalfUlp) {
  Rng rng(33);
  const auto x = test::random_normal(rng, 999, 100.0f);
  std::vector<uint8_t> row(x.size() * 2);
  std::vector<float> y(x.size());
  quantize_row_f16(x.data(), row.data(), 999);
  dequantize_row_f16(row.data(), y.data(), 999);
  for (size_t i = 0; i < x.size(); ++i) {
    const double ulp = std::ldexp(1.0, std::ilogb(std::fmax(std::fabs(x[i]), 6.103515625e-05f)) - 10);
    ASSERT_LE(std::fabs(y[i] - x[i]), ulp / 2) << x[i];
  }
}

TEST(BF16Reference, DequantizeIsTheTopHalfOfAFloat) {
  Rng rng(34);
  const auto row = test::random_bytes(rng, 2 * 301);
  std::vector<float> y(301);
  dequantize_row_bf16(row.data(), y.data(), 301);
  for (int i = 0; i < 301; ++i) {
    const uint32_t bits = static_cast<uint32_t>(test::le16(&row[2 * i])) << 16;
    float expect;
    std::memcpy(&expect, &bits, 4);
    if (std::isnan(expect)) {
      ASSERT_TRUE(std::isnan(y[i]));
    } else {
      ASSERT_EQ(y[i], expect) << i;
    }
  }
}

TEST(BF16Reference, QuantizeRoundsToNearestEven) {
  const std::vector<float> x = {1.00390625f,                         // tie: 1 + 2^-8 -> even 1.0
                                1.01171875f,                         // tie: 1 + 3*2^-8 -> 1 + 4*2^-8
                                1.0f + 1.0f / 512,                   // below the tie: 1.0
                                -3.0e38f,                            // 0xff61b1e6: low half above the tie
                                std::numeric_limits<float>::max()};  // rounds up to inf
  std::vector<uint8_t> row(x.size() * 2);
  quantize_row_bf16(x.data(), row.data(), static_cast<int64_t>(x.size()));
  const uint16_t expect[] = {0x3f80, 0x3f82, 0x3f80, 0xff62, 0x7f80};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(test::le16(&row[2 * i]), expect[i]) << i;
}

}  // namespace
}  // namespace lowbit::float_formats_test
