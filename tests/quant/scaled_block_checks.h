// Checks shared by the tests of block formats with one fp16 scale per block
// (Q4_0, Q8_0, TQ1_0, TQ2_0): each test file passes its own readers of the
// packed bytes, so a layout is decoded independently of the code under test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/half.h"
#include "quant_test_util.h"

namespace lowbit::test {

struct ScaledBlockFormat {
  int64_t block_size;  // values per block
  int64_t block_bytes;
  std::function<float(const std::vector<uint8_t>& row, int64_t block)> d_at;
  std::function<int(const std::vector<uint8_t>& row, int64_t block, int64_t element)> value_at;
  std::function<std::vector<uint8_t>(Rng& rng, int64_t blocks)> random_row;
  void (*quantize)(const float* src, uint8_t* row, int64_t n);
  float (*dot_i8)(const uint8_t* row, const int8_t* q, int64_t n);
};

// dot_i8 = sum over blocks, in order, of d * float(exact integer sum), for
// random activations and activations all at +127 or -128.
inline void expect_dot_is_block_scaled_integer_sums(const ScaledBlockFormat& f, std::vector<int64_t> block_counts,
                                                    uint64_t seed) {
  Rng rng(seed);
  const int64_t bs = f.block_size;
  for (int64_t blocks : block_counts) {
    const auto row = f.random_row(rng, blocks);
    for (int pattern = 0; pattern < 3; ++pattern) {
      std::vector<int8_t> q = pattern == 0 ? random_int8(rng, blocks * bs)
                                           : std::vector<int8_t>(static_cast<size_t>(blocks * bs),
                                                                 pattern == 1 ? int8_t{127} : int8_t{-128});
      float expect = 0.0f;
      double exact = 0, magnitude = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        int32_t sum = 0;
        for (int64_t e = 0; e < bs; ++e) {
          sum += f.value_at(row, b, e) * q[b * bs + e];
          const double term = static_cast<double>(f.d_at(row, b)) * f.value_at(row, b, e) * q[b * bs + e];
          exact += term;
          magnitude += std::fabs(term);
        }
        expect += f.d_at(row, b) * static_cast<float>(sum);
      }
      const float got = f.dot_i8(row.data(), q.data(), blocks * bs);
      EXPECT_EQ(got, expect) << blocks << " " << pattern;
      EXPECT_NEAR(got, exact, magnitude * 1e-6) << blocks << " " << pattern;
    }
  }
}

// Ternary formats (TQ1_0, TQ2_0): d = max|x| of the block in fp16, each value
// the nearest trit of x / d.
inline void expect_quantize_rounds_ratio_to_nearest_trit(const ScaledBlockFormat& f, uint64_t seed) {
  Rng rng(seed);
  const int64_t bs = f.block_size;
  const auto x = random_normal(rng, 2 * bs);
  std::vector<uint8_t> row(static_cast<size_t>(2 * f.block_bytes));
  f.quantize(x.data(), row.data(), 2 * bs);
  for (int64_t b = 0; b < 2; ++b) {
    float amax = 0;
    for (int64_t e = 0; e < bs; ++e) amax = std::fmax(amax, std::fabs(x[b * bs + e]));
    EXPECT_EQ(f.d_at(row, b), fp16_to_float(float_to_fp16(amax)));
    for (int64_t e = 0; e < bs; ++e) ASSERT_EQ(f.value_at(row, b, e), std::lround(x[b * bs + e] * (1.0f / amax))) << e;
  }
}

}  // namespace lowbit::test
