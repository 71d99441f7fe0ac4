#include <gtest/gtest.h>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/aipc_families.h"
#include "kernels/vnni4_layout.h"
#include "ternary_test_support.h"
#include "vnni4_test_support.h"

namespace lowbit::test {
namespace {

TEST(Int1Kernel, Q1_0MatchesReferenceBitExact) {
  // Long rows too (K = 6912, 8320).
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 128},    {17, 384},  {33, 2560},
                                                            {640, 2560}, {13, 6912}, {3, 8320}};
  for (const auto& [rows, cols] : shapes) {
    // Several tokens go 4 at a time (plain AVX2), a lone last one alone: 7 = 4 + 3, 5 = 4 + 1.
    for (int64_t tokens : {1, 4, 5, 7}) {
      const auto data = random_scaled_blocks(GgmlType::Q1_0, rows, cols, rows * 7 + cols);
      const auto names = expect_family_matches_reference("int1", GgmlType::Q1_0, data, rows, cols, tokens, tokens);
      EXPECT_EQ(names.size(), 2 * isa_variants().size());  // each ISA level with and without AMD's paths
    }
  }
}

TEST(Int1Kernel, KernelsExactAtActivationExtremes) {
  const auto kernels = runnable({
#if LOWBIT_X86_KERNELS
      {Vnni4Isa::Avx512Vnni, {"int1/avx512-vnni", int1_gemv_avx512}},
      {Vnni4Isa::Avx512Vnni, {"int1/avx512-vnni (prefetcht0)", int1_gemv_avx512_t0}},
      {Vnni4Isa::Avx512Vnni, {"int1/avx512-vnni, 4 tokens", tokens_as_one<int1_tokens_avx512, 4>}},
      {Vnni4Isa::Avx512Vnni, {"int1/avx512-vnni, 3 tokens", tokens_as_one<int1_tokens_avx512, 3>}},
      {Vnni4Isa::Avx512Vnni, {"int1/avx512-vnni, 2 tokens", tokens_as_one<int1_tokens_avx512, 2>}},
      {Vnni4Isa::AvxVnni, {"int1/avx-vnni", int1_gemv_avx_vnni}},
      {Vnni4Isa::Avx2, {"int1/avx2", int1_gemv_avx2}},
      {Vnni4Isa::Avx2, {"int1/avx2, 4 tokens", tokens_as_one<int1_tokens_avx2, 4>}},
      {Vnni4Isa::Avx2, {"int1/avx2, 2 tokens", tokens_as_one<int1_tokens_avx2, 2>}},
#endif
#if LOWBIT_NEON_KERNELS
      {Vnni4Isa::NeonDot, {"int1/neon-dotprod", int1_gemv_neon}},
      {Vnni4Isa::NeonDot, {"int1/neon-dotprod, 4 tokens", tokens_as_one<int1_tokens_neon, 4>}},
      {Vnni4Isa::NeonDot, {"int1/neon-dotprod, 3 tokens", tokens_as_one<int1_tokens_neon, 3>}},
#endif
  });
  expect_kernels_exact(Vnni4Bits::One, kernels, 2, {-1, 1}, -1, nullptr, 45, 384, 128, 3);
  expect_kernels_exact(Vnni4Bits::One, kernels, 2, {-1, 1}, -1, nullptr, 16, 1024, 1024, 4);
  expect_kernels_exact(Vnni4Bits::One, kernels, 2, {-1, 1}, -1, nullptr, 17, 96, 32, 5);  // one-line groups
  // Every bit 1 and every activation -128: plain AVX2's int16 sums at their widest.
  expect_kernels_exact(Vnni4Bits::One, kernels, 2, {-1, 1}, -1, nullptr, 16, 4096, 4096, 6, 1);
}

TEST(Int1Kernel, LayoutNeedsGroupsOfWholeLines) {
  ThreadPool pool(1);
  const auto zeros = [](int64_t, uint8_t*, uint16_t*) {};
  try {
    pack_vnni4(Vnni4Bits::One, 16, 96, 48, zeros, pool);
    FAIL() << "groups of 48 k packed as int1 lines of 32";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("groups of 48 k does not fit"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("of 32"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(pack_vnni4(Vnni4Bits::One, 16, 96, 32, zeros, pool));
  EXPECT_NO_THROW(pack_vnni4(Vnni4Bits::Two, 16, 96, 48, zeros, pool));  // 16-k steps: 48 fits
}

TEST(Int1Kernel, OnlyQ1_0) {
  EXPECT_EQ(find_kernel_family("int1")->score({"w", GgmlType::Q2_0, 16, 128, nullptr}, cpu_features()), 0);
  EXPECT_GT(find_kernel_family("int1")->score({"w", GgmlType::Q1_0, 16, 128, nullptr}, cpu_features()), 1);
}

}  // namespace
}  // namespace lowbit::test
