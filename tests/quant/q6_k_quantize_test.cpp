// quantize_row_q6_K: what it writes reads back (dequantize_row_q6_K) within
// half a step of each 16-value sub-block, and exact values survive.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/half.h"
#include "core/rng.h"
#include "quant/q6_k.h"

namespace lowbit::q6_k_quantize_test {
namespace {

TEST(Q6KQuantize, RoundTripsWithinHalfAStep) {
  Rng rng(5);
  for (float amp : {1e-3f, 1.0f, 300.0f}) {
    const int64_t n = 4 * kQ6_KBlockSize;
    std::vector<float> x(static_cast<size_t>(n)), y(x.size());
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(rng.normal()) * amp * (i % 41 == 7 ? 20.0f : 1.0f);
    for (int64_t i = 0; i < 16; ++i) x[i] = 0.0f;  // an all-zero sub-block
    for (int64_t i = 16; i < 32; ++i) x[i] = amp;  // all positive: +31 steps must reach it
    std::vector<uint8_t> row(static_cast<size_t>(n / kQ6_KBlockSize * sizeof(BlockQ6_K)));
    quantize_row_q6_K(x.data(), row.data(), n);
    dequantize_row_q6_K(row.data(), y.data(), n);
    for (int64_t blk = 0; blk < n / kQ6_KBlockSize; ++blk) {
      float block_amax = 0;
      for (int64_t i = 0; i < kQ6_KBlockSize; ++i) block_amax = std::max(block_amax, std::fabs(x[blk * 256 + i]));
      const float d = block_amax / 31.0f / 127.0f;  // about the block's d: a sub-scale step
      for (int64_t sub = 0; sub < 16; ++sub) {
        const int64_t first = blk * 256 + sub * 16;
        float amax = 0;
        for (int64_t i = first; i < first + 16; ++i) amax = std::max(amax, std::fabs(x[i]));
        // Half the sub-block's step, which is at most amax / 31 plus one d
        // (the sub-scale rounded up), plus fp16 d's rounding (subnormal for tiny amp).
        const float tol = 0.5f * (amax / 31.0f + d) * 1.01f + 32.0f * 127.0f * 3e-8f;
        for (int64_t i = first; i < first + 16; ++i) ASSERT_NEAR(y[i], x[i], tol) << "amp " << amp << " at " << i;
      }
    }
    for (int64_t i = 0; i < 16; ++i) EXPECT_EQ(y[i], 0.0f);
  }
}

}  // namespace
}  // namespace lowbit::q6_k_quantize_test
