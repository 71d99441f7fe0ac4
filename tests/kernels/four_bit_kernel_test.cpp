// The 4-bit families (q4_0, iq4_nl) against their formats' reference dots,
// bit for bit: real shapes, odd row counts, one and several tokens, every
// field value and scale sign; and each kernel straight at its extremes (every
// weight at one end of its range against -128 everywhere: q4_0's widest int16
// sums, iq4_nl's sign trick at -127 and +113), one token and several.
#include <gtest/gtest.h>

#include "kernels/aipc_families.h"
#include "quant/iq4_nl.h"
#include "ternary_test_support.h"
#include "vnni4_test_support.h"

namespace lowbit::test {
namespace {

struct FourBit {
  const char* family;
  GgmlType type;
  std::vector<std::pair<Vnni4Isa, NamedKernel>> kernels;  // this build's, one and several tokens
  int32_t xsum_factor;
  std::vector<int> weight_of;  // [16] the weight a field value stands for
  bool lut;                    // the kernel looks weight_of up (Vnni4Task::lut)
};

std::vector<FourBit> four_bit_formats() {
  FourBit q4_0{"q4_0", GgmlType::Q4_0, {}, -8, {}, false};
  FourBit iq4_nl{"iq4_nl", GgmlType::IQ4_NL, {}, 0, {}, true};
#if LOWBIT_X86_KERNELS
  q4_0.kernels = {{Vnni4Isa::Avx2, {"q4_0/avx2", int4_linear_gemv_avx2}},
                  {Vnni4Isa::Avx2, {"q4_0/avx2, 4 tokens", tokens_as_one<int4_linear_tokens_avx2, 4>}},
                  {Vnni4Isa::Avx2, {"q4_0/avx2, 3 tokens", tokens_as_one<int4_linear_tokens_avx2, 3>}}};
  iq4_nl.kernels = {{Vnni4Isa::Avx2, {"iq4_nl/avx2", int4_lut_gemv_avx2}},
                    {Vnni4Isa::Avx2, {"iq4_nl/avx2, 4 tokens", tokens_as_one<int4_lut_tokens_avx2, 4>}},
                    {Vnni4Isa::Avx2, {"iq4_nl/avx2, 2 tokens", tokens_as_one<int4_lut_tokens_avx2, 2>}}};
#endif
#if LOWBIT_NEON_KERNELS
  q4_0.kernels = {{Vnni4Isa::NeonDot, {"q4_0/neon-dotprod", int4_linear_gemv_neon}},
                  {Vnni4Isa::NeonDot, {"q4_0/neon-dotprod, 4 tokens", tokens_as_one<int4_linear_tokens_neon, 4>}},
                  {Vnni4Isa::NeonDot, {"q4_0/neon-dotprod, 3 tokens", tokens_as_one<int4_linear_tokens_neon, 3>}}};
  iq4_nl.kernels = {{Vnni4Isa::NeonDot, {"iq4_nl/neon-dotprod", int4_lut_gemv_neon}},
                    {Vnni4Isa::NeonDot, {"iq4_nl/neon-dotprod, 4 tokens", tokens_as_one<int4_lut_tokens_neon, 4>}},
                    {Vnni4Isa::NeonDot, {"iq4_nl/neon-dotprod, 2 tokens", tokens_as_one<int4_lut_tokens_neon, 2>}}};
#endif
  for (int u = 0; u < 16; ++u) {
    q4_0.weight_of.push_back(u - 8);
    iq4_nl.weight_of.push_back(kIq4NlValues[static_cast<size_t>(u)]);
  }
  return {q4_0, iq4_nl};
}

TEST(FourBitKernels, MatchReferenceBitExact) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 32},     {17, 96},   {35, 2560}, {640, 2560},
                                                            {19, 4064}, {21, 6912}, {9, 8352}};
  for (const FourBit& f : four_bit_formats())
    for (const auto& [rows, cols] : shapes)
      for (int64_t tokens : {1, 2, 3, 4, 7}) {
        const auto data = random_scaled_blocks(f.type, rows, cols, rows * 7 + cols);
        const auto names = expect_family_matches_reference(f.family, f.type, data, rows, cols, tokens, tokens);
        EXPECT_FALSE(names.empty()) << "no " << f.family << " kernel ran";
      }
}

TEST(FourBitKernels, ExactAtActivationAndWeightExtremes) {
  for (const FourBit& f : four_bit_formats()) {
    const auto kernels = runnable(f.kernels);
    uint8_t lut[16];
    for (int i = 0; i < 16; ++i) lut[i] = static_cast<uint8_t>(f.weight_of[static_cast<size_t>(i)]);
    const uint8_t* table = f.lut ? lut : nullptr;
    expect_kernels_exact(Vnni4Bits::Four, kernels, 16, f.weight_of, f.xsum_factor, table, 23, 160, 32, 5);
    expect_kernels_exact(Vnni4Bits::Four, kernels, 16, f.weight_of, f.xsum_factor, table, 9, 256, 256, 6);  // long groups
    for (const int only : {0, 15})
      expect_kernels_exact(Vnni4Bits::Four, kernels, 16, f.weight_of, f.xsum_factor, table, 17, 512, 64, 7, only);
  }
}

TEST(FourBitKernels, AutoPicksThemForTheirTypeAndNeedsAvx2OrNeonDotprod) {
  CpuFeatures avx2 = cpu_features();
  avx2.avx512f = avx2.avx512vnni = avx2.avx_vnni = false;
  CpuFeatures plain = avx2;
  plain.avx2 = plain.neon_dotprod = false;
  for (const FourBit& f : four_bit_formats()) {
    const KernelFamily* family = find_kernel_family(f.family);
    ASSERT_NE(family, nullptr) << f.family;
    const WeightView w{"w", f.type, 16, 32, nullptr};
    EXPECT_EQ(family->score(w, avx2), avx2.has_avx2_level() || avx2.has_neon_level() ? 20 : 0) << f.family;
    EXPECT_EQ(family->score({"w", GgmlType::Q8_0, 16, 32, nullptr}, avx2), 0) << f.family;
    EXPECT_EQ(family->score(w, plain), 0) << f.family;
  }
}

}  // namespace
}  // namespace lowbit::test
