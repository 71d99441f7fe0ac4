// The q4_0 family against the reference Q4_0 dot, bit for bit: real shapes,
// odd row counts, one and several tokens, every nibble and scale sign; and the
// kernel straight at the int16 sums' widest (every weight +7 or -8, every
// activation -128).
#include <gtest/gtest.h>

#include "kernels/aipc_families.h"
#include "ternary_test_support.h"
#include "vnni4_test_support.h"

namespace lowbit::test {
namespace {

TEST(Q4_0Kernel, MatchesReferenceBitExact) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 32},     {17, 96},   {35, 2560}, {640, 2560},
                                                            {19, 4064}, {21, 6912}, {9, 8352}};
  for (const auto& [rows, cols] : shapes) {
    for (int64_t tokens : {1, 3}) {
      const auto data = random_scaled_blocks(GgmlType::Q4_0, rows, cols, rows * 7 + cols);
      const auto names = expect_family_matches_reference("q4_0", GgmlType::Q4_0, data, rows, cols, tokens, tokens);
      EXPECT_FALSE(names.empty()) << "no q4_0 kernel ran";
    }
  }
}

TEST(Q4_0Kernel, KernelExactAtActivationAndWeightExtremes) {
  const auto kernels = runnable({{Vnni4Isa::Avx2, {"q4_0/avx2", int4_linear_gemv_avx2}}});
  std::vector<int> weight_of(16);
  for (int u = 0; u < 16; ++u) weight_of[u] = u - 8;  // stored u = nibble, weight = nibble - 8
  expect_kernels_exact(Vnni4Bits::Four, kernels, 16, weight_of, -8, nullptr, 23, 160, 32, 5);
  expect_kernels_exact(Vnni4Bits::Four, kernels, 16, weight_of, -8, nullptr, 9, 256, 256, 6);  // long groups
  for (const int only : {0, 15})  // the widest int16 sums, all of one sign
    expect_kernels_exact(Vnni4Bits::Four, kernels, 16, weight_of, -8, nullptr, 17, 512, 64, 7, only);
}

TEST(Q4_0Kernel, AutoPicksItForQ4_0AndNeedsAvx2) {
  CpuFeatures avx2 = cpu_features();
  avx2.avx512f = avx2.avx512vnni = avx2.avx_vnni = false;
  const KernelFamily* q4_0 = find_kernel_family("q4_0");
  ASSERT_NE(q4_0, nullptr);
  const WeightView w{"w", GgmlType::Q4_0, 16, 32, nullptr};
  EXPECT_EQ(q4_0->score(w, avx2), avx2.has_avx2_level() ? 20 : 0);
  EXPECT_EQ(q4_0->score({"w", GgmlType::Q8_0, 16, 32, nullptr}, avx2), 0);
  CpuFeatures plain = avx2;
  plain.avx2 = false;
  EXPECT_EQ(q4_0->score(w, plain), 0);
}

}  // namespace
}  // namespace lowbit::test
