#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lowbit {
namespace {

TEST(Half, EveryFp16RoundTripsThroughFloat) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_fp16(f), h) << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  EXPECT_EQ(fp16_to_float(float_to_fp16(1.0f + 1.0f / 2048)), 1.0f);  // tie -> even
  EXPECT_EQ(fp16_to_float(float_to_fp16(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);  // overflows to inf
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7bff);
  EXPECT_EQ(fp16_to_float(float_to_fp16(5.96046448e-8f)), 5.96046448e-8f);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(2.9e-8f), 0);
  EXPECT_EQ(float_to_bf16(1.00390625f), 0x3f80);  // tie -> even
  EXPECT_EQ(bf16_to_float(0x3f81), 1.0078125f);
}

}  // namespace
}  // namespace lowbit
