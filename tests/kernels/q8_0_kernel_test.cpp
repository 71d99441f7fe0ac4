#include <gtest/gtest.h>

#include "kernels/aipc_families.h"
#include "ternary_test_support.h"
#include "vnni4_test_support.h"

namespace lowbit::test {
namespace {

TEST(Q8_0Kernel, MatchesReferenceBitExact) {
  // Long rows too (K = 4064, 6912, 8352).
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 32},    {17, 96},   {35, 2560},
                                                            {640, 2560}, {19, 4064}, {21, 6912}, {9, 8352},
                                                            {768, 65536}};  // row blocks of 1.1 MB: one-token streams
  for (const auto& [rows, cols] : shapes) {
    for (int64_t tokens : {1, 3, 6}) {  // 6: a block of 4 and one of 2
      const auto data = random_scaled_blocks(GgmlType::Q8_0, rows, cols, rows * 5 + cols);
      const auto names = expect_family_matches_reference("q8_0", GgmlType::Q8_0, data, rows, cols, tokens, tokens);
      EXPECT_FALSE(names.empty());
    }
  }
}

TEST(Q8_0Kernel, KernelsExactAtActivationAndWeightExtremes) {
  const auto kernels = runnable({
#if LOWBIT_X86_KERNELS
      {Vnni4Isa::Avx512Vnni, {"q8_0/avx512-vnni", q8_0_gemv_avx512}},
      {Vnni4Isa::Avx512Vnni, {"q8_0/avx512-vnni (prefetcht0)", q8_0_gemv_avx512_t0}},
      {Vnni4Isa::Avx512Vnni, {"q8_0/avx512-vnni, 4 tokens", tokens_as_one<q8_0_tokens_avx512, 4>}},
      {Vnni4Isa::Avx512Vnni, {"q8_0/avx512-vnni, 3 tokens", tokens_as_one<q8_0_tokens_avx512, 3>}},
      {Vnni4Isa::Avx512Vnni, {"q8_0/avx512-vnni, 2 tokens", tokens_as_one<q8_0_tokens_avx512, 2>}},
      {Vnni4Isa::AvxVnni, {"q8_0/avx-vnni", q8_0_gemv_avx_vnni}},
      {Vnni4Isa::AvxVnni, {"q8_0/avx-vnni, 4 tokens", tokens_as_one<q8_0_tokens_avx_vnni, 4>}},
      {Vnni4Isa::AvxVnni, {"q8_0/avx-vnni, 2 tokens", tokens_as_one<q8_0_tokens_avx_vnni, 2>}},
      {Vnni4Isa::Avx2, {"q8_0/avx2", q8_0_gemv_avx2}},
#endif
#if LOWBIT_NEON_KERNELS
      {Vnni4Isa::NeonDot, {"q8_0/neon-dotprod", q8_0_gemv_neon}},
      {Vnni4Isa::NeonDot, {"q8_0/neon-dotprod, 4 tokens", tokens_as_one<q8_0_tokens_neon, 4>}},
      {Vnni4Isa::NeonDot, {"q8_0/neon-dotprod, 2 tokens", tokens_as_one<q8_0_tokens_neon, 2>}},
#endif
  });
  std::vector<int> weight_of(256);
  for (int u = 0; u < 256; ++u) weight_of[u] = u - 128;  // stored u = w + 128, w = -128 .. 127
  expect_kernels_exact(Vnni4Bits::Eight, kernels, 256, weight_of, -128, nullptr, 23, 160, 32, 5);
  expect_kernels_exact(Vnni4Bits::Eight, kernels, 256, weight_of, -128, nullptr, 9, 48, 16, 6);  // 4-step groups
}

TEST(Q8_0Kernel, NeedsAvx2OrNeonDotprod) {
  CpuFeatures avx2 = cpu_features();
  avx2.avx512f = avx2.avx512vnni = avx2.avx_vnni = false;
  const KernelFamily* q8_0 = find_kernel_family("q8_0");
  const WeightView w{"w", GgmlType::Q8_0, 16, 32, nullptr};
  EXPECT_EQ(q8_0->score(w, avx2), avx2.has_avx2_level() || avx2.has_neon_level() ? 20 : 0);
  CpuFeatures plain = avx2;
  plain.avx2 = plain.neon_dotprod = false;
  EXPECT_EQ(q8_0->score(w, plain), 0);
}

}  // namespace
}  // namespace lowbit::test
