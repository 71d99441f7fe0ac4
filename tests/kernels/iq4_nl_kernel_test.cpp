// The iq4_nl family against the reference IQ4_NL dot, bit for bit: real
// shapes, odd row counts, one and several tokens, every index and scale sign;
// and the kernel straight at its extremes (every weight -127 or +113, every
// activation -128, where the sign trick must still be exact).
#include <gtest/gtest.h>

#include "kernels/aipc_families.h"
#include "quant/iq4_nl.h"
#include "ternary_test_support.h"
#include "vnni4_test_support.h"

namespace lowbit::test {
namespace {

TEST(Iq4NlKernel, MatchesReferenceBitExact) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 32},     {17, 96},   {35, 2560}, {640, 2560},
                                                            {19, 4064}, {21, 6912}, {9, 8352}};
  for (const auto& [rows, cols] : shapes) {
    for (int64_t tokens : {1, 3}) {
      const auto data = random_scaled_blocks(GgmlType::IQ4_NL, rows, cols, rows * 11 + cols);
      const auto names = expect_family_matches_reference("iq4_nl", GgmlType::IQ4_NL, data, rows, cols, tokens, tokens);
      EXPECT_FALSE(names.empty()) << "no iq4_nl kernel ran";
    }
  }
}

TEST(Iq4NlKernel, KernelExactAtActivationAndWeightExtremes) {
  const auto kernels = runnable({{Vnni4Isa::Avx2, {"iq4_nl/avx2", int4_lut_gemv_avx2}}});
  std::vector<int> weight_of(16);
  uint8_t lut[16];
  for (int i = 0; i < 16; ++i) {
    weight_of[i] = kIq4NlValues[static_cast<size_t>(i)];
    lut[i] = static_cast<uint8_t>(kIq4NlValues[static_cast<size_t>(i)]);
  }
  expect_kernels_exact(Vnni4Bits::Four, kernels, 16, weight_of, 0, lut, 23, 160, 32, 5);
  expect_kernels_exact(Vnni4Bits::Four, kernels, 16, weight_of, 0, lut, 9, 256, 256, 6);  // long groups
  for (const int only : {0, 15})  // -127 and +113 everywhere, against -128
    expect_kernels_exact(Vnni4Bits::Four, kernels, 16, weight_of, 0, lut, 17, 512, 64, 7, only);
}

TEST(Iq4NlKernel, AutoPicksItForIq4NlAndNeedsAvx2) {
  CpuFeatures avx2 = cpu_features();
  avx2.avx512f = avx2.avx512vnni = avx2.avx_vnni = false;
  const KernelFamily* f = find_kernel_family("iq4_nl");
  ASSERT_NE(f, nullptr);
  const WeightView w{"w", GgmlType::IQ4_NL, 16, 32, nullptr};
  EXPECT_EQ(f->score(w, avx2), avx2.has_avx2_level() ? 20 : 0);
  EXPECT_EQ(f->score({"w", GgmlType::Q4_0, 16, 32, nullptr}, avx2), 0);
  CpuFeatures plain = avx2;
  plain.avx2 = false;
  EXPECT_EQ(f->score(w, plain), 0);
}

}  // namespace
}  // namespace lowbit::test
