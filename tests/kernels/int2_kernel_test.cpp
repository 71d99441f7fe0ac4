#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "core/half.h"
#include "core/rng.h"
#include "kernels/aipc_families.h"
#include "ternary_test_support.h"
#include "vnni4_test_support.h"

namespace lowbit::test {
namespace {

std::array<uint8_t, 32> nibble_luts(const std::array<int8_t, 4>& levels) {
  const int lowest = *std::min_element(levels.begin(), levels.end());
  std::array<uint8_t, 32> lut{};
  for (int n = 0; n < 16; ++n) {
    lut[n] = static_cast<uint8_t>(levels[n & 3] - lowest);
    lut[16 + n] = static_cast<uint8_t>(levels[n >> 2] - lowest);
  }
  return lut;
}

TEST(Int2Kernel, Q2_0MatchesReferenceBitExact) {
  // Long rows too (K = 6912, 9024).
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 64},     {17, 192},  {35, 2560}, {16, 64},
                                                            {640, 2560}, {21, 6912}, {5, 9024}};
  for (const auto& [rows, cols] : shapes) {
    // Several tokens go 4 at a time (plain AVX2), a lone last one alone: 7 = 4 + 3, 5 = 4 + 1.
    for (int64_t tokens : {1, 3, 4, 5, 7}) {
      const auto data = random_scaled_blocks(GgmlType::Q2_0, rows, cols, rows * 31 + cols);
      const auto names = expect_family_matches_reference("int2", GgmlType::Q2_0, data, rows, cols, tokens, tokens);
      EXPECT_EQ(names.size(), 2 * isa_variants().size());  // each ISA level with and without AMD's paths
    }
  }
}

TEST(Int2Kernel, TernaryFilesMatchReferenceBitExact) {
  for (GgmlType type : {GgmlType::TQ2_0, GgmlType::I2_S}) {
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{21, 256}, {40, 768}, {17, 6912}}) {
      const auto t = random_ternary(rows, cols, rows + cols);
      const auto data = encode_ternary(type, t, rows, cols, 0.37f);
      // Groups of several int16 windows (TQ2_0: 256 k; I2_S: the whole row), 1 to 6 tokens.
      for (int64_t tokens : {1, 2, 6})
        EXPECT_FALSE(expect_family_matches_reference("int2", type, data, rows, cols, tokens, 5).empty());
    }
  }
}

TEST(Int2Kernel, KernelsExactAtActivationExtremes) {
  const auto kernels = runnable({
#if LOWBIT_X86_KERNELS
      {Vnni4Isa::Avx512Vnni, {"int2/avx512-vnni", int2_gemv_avx512}},
      {Vnni4Isa::Avx512Vnni, {"int2/avx512-vnni (prefetcht0)", int2_gemv_avx512_t0}},
      {Vnni4Isa::AvxVnni, {"int2/avx-vnni", int2_gemv_avx_vnni}},
      {Vnni4Isa::Avx2, {"int2/avx2", int2_gemv_avx2}},
#endif
#if LOWBIT_NEON_KERNELS
      {Vnni4Isa::NeonDot, {"int2/neon-dotprod", int2_gemv_neon}},
      {Vnni4Isa::NeonDot, {"int2/neon-dotprod, 4 tokens", tokens_as_one<int2_tokens_neon, 4>}},
      {Vnni4Isa::NeonDot, {"int2/neon-dotprod, 2 tokens", tokens_as_one<int2_tokens_neon, 2>}},
#endif
  });
  // Q2_0's levels, ParetoQ-style symmetric levels (x2), and an arbitrary set
  // spanning the plain-AVX2 limit of 127.
  for (const std::array<int8_t, 4> levels :
       {std::array<int8_t, 4>{-1, 0, 1, 2}, {-3, -1, 1, 3}, {50, -77, 0, 13}}) {
    const auto lut = nibble_luts(levels);
    const int lowest = *std::min_element(levels.begin(), levels.end());
    const std::vector<int> weight_of(levels.begin(), levels.end());
    expect_kernels_exact(Vnni4Bits::Two, kernels, 4, weight_of, lowest, lut.data(), 37, 320, 64, 1);
    expect_kernels_exact(Vnni4Bits::Two, kernels, 4, weight_of, lowest, lut.data(), 16, 512, 512, 2);
    expect_kernels_exact(Vnni4Bits::Two, kernels, 4, weight_of, lowest, lut.data(), 20, 144, 48, 3);  // odd steps
  }
#if LOWBIT_NEON_KERNELS
  // sdot multiplies u - 128: levels may span all of int8, and with every
  // weight at u = 0 and every activation -128 each product is 2^14.
  const auto wide = runnable({{Vnni4Isa::NeonDot, {"int2/neon-dotprod", int2_gemv_neon}},
                              {Vnni4Isa::NeonDot, {"int2/neon-dotprod, 3 tokens", tokens_as_one<int2_tokens_neon, 3>}}});
  ASSERT_EQ(wide.empty(), !cpu_features().has_neon_level());
  if (!wide.empty()) {
    const std::array<int8_t, 4> levels = {-128, 127, 0, -1};
    const auto lut = nibble_luts(levels);
    const std::vector<int> weight_of(levels.begin(), levels.end());
    expect_kernels_exact(Vnni4Bits::Two, wide, 4, weight_of, -128, lut.data(), 37, 320, 64, 1);
    expect_kernels_exact(Vnni4Bits::Two, wide, 4, weight_of, -128, lut.data(), 16, 4096, 4096, 6, 0);
  }
#endif
#if LOWBIT_X86_KERNELS
  // Levels spanning at most 7: plain AVX2's int16 sums (one token, and the
  // several-token loop), at the span limit with activations at -128 (the
  // widest sums), groups of 1, 4 (its flush) and 32 steps.
  const auto narrow = runnable({{Vnni4Isa::Avx2, {"int2/avx2-int16", int2_gemv_avx2_int16}},
                                {Vnni4Isa::Avx2, {"int2/avx2-int16, 4 tokens", tokens_as_one<int2_tokens_avx2_int16, 4>}},
                                {Vnni4Isa::Avx2, {"int2/avx2-int16, 3 tokens", tokens_as_one<int2_tokens_avx2_int16, 3>}}});
  ASSERT_FALSE(narrow.empty());
  for (const std::array<int8_t, 4> levels :
       {std::array<int8_t, 4>{-1, 0, 1, 2}, {-3, -1, 1, 3}, {-4, 3, 0, -1}, {-128, -121, -125, -128}}) {
    const auto lut = nibble_luts(levels);
    const int lowest = *std::min_element(levels.begin(), levels.end());
    const std::vector<int> weight_of(levels.begin(), levels.end());
    expect_kernels_exact(Vnni4Bits::Two, narrow, 4, weight_of, lowest, lut.data(), 37, 320, 64, 1);
    expect_kernels_exact(Vnni4Bits::Two, narrow, 4, weight_of, lowest, lut.data(), 16, 512, 512, 2);
    expect_kernels_exact(Vnni4Bits::Two, narrow, 4, weight_of, lowest, lut.data(), 20, 144, 48, 3);
    expect_kernels_exact(Vnni4Bits::Two, narrow, 4, weight_of, lowest, lut.data(), 16, 80, 16, 4);
  }
  {  // every weight at u = 7, every activation -128: each flush's sums reach -28672
    const std::array<int8_t, 4> levels = {-4, 3, 0, -1};
    const auto lut = nibble_luts(levels);
    const std::vector<int> weight_of(levels.begin(), levels.end());
    expect_kernels_exact(Vnni4Bits::Two, narrow, 4, weight_of, -4, lut.data(), 16, 512, 512, 5, 1);
  }
  // Levels lowest + code: the AVX-512 kernel that masks codes in place.
  const auto linear = runnable({{Vnni4Isa::Avx512Vnni, {"int2/avx512-vnni-linear", int2_linear_gemv_avx512}},
                                {Vnni4Isa::Avx512Vnni, {"int2/avx512-vnni-linear (prefetcht0)", int2_linear_gemv_avx512_t0}}});
  const CpuFeatures& cpu = cpu_features();
  ASSERT_EQ(linear.empty(), !(cpu.has_avx512_level() && cpu.avx512vnni));  // AVX-512 only
  if (linear.empty()) return;
  for (const std::array<int8_t, 4> levels : {std::array<int8_t, 4>{-1, 0, 1, 2}, {-128, -127, -126, -125}}) {
    const auto lut = nibble_luts(levels);
    const std::vector<int> weight_of(levels.begin(), levels.end());
    expect_kernels_exact(Vnni4Bits::Two, linear, 4, weight_of, levels[0], lut.data(), 37, 320, 64, 1);
    expect_kernels_exact(Vnni4Bits::Two, linear, 4, weight_of, levels[0], lut.data(), 16, 512, 512, 2);
    expect_kernels_exact(Vnni4Bits::Two, linear, 4, weight_of, levels[0], lut.data(), 20, 144, 48, 3);
  }
#endif
}

// Levels lowest + code take the masking kernel on AVX-512 VNNI; levels
// spanning at most 7 take the int16-sum kernel on plain AVX2.
TEST(Int2Kernel, LinearAndNarrowLevelsTakeTheirKernels) {
  ThreadPool pool(1);
  const auto none = [](int64_t, uint8_t*, uint16_t*) {};
  for (const IsaVariant& v : isa_variants()) {
    const std::string isa = vnni4_isa_name(vnni4_isa(v.cpu));
    const bool masking = vnni4_isa(v.cpu) == Vnni4Isa::Avx512Vnni;
    const bool plain = vnni4_isa(v.cpu) == Vnni4Isa::Avx2;
    EXPECT_EQ(make_int2_matmul(16, 64, 64, {-1, 0, 1, 2}, none, v.cpu, pool)->kernel_name(),
              "int2/" + isa + (masking ? "-linear" : plain ? "-int16" : ""));
    EXPECT_EQ(make_int2_matmul(16, 64, 64, {-3, -1, 1, 3}, none, v.cpu, pool)->kernel_name(),
              "int2/" + isa + (plain ? "-int16" : ""));
    EXPECT_EQ(make_int2_matmul(16, 64, 64, {-4, 3, 0, -1}, none, v.cpu, pool)->kernel_name(),
              "int2/" + isa + (plain ? "-int16" : ""));  // span 7, the int16 kernel's limit
    EXPECT_EQ(make_int2_matmul(16, 64, 64, {-4, 4, 0, -1}, none, v.cpu, pool)->kernel_name(), "int2/" + isa);
  }
}

TEST(Int2Kernel, AnyLevelsThroughMakeInt2Matmul) {
  ThreadPool pool(2);
  const int64_t rows = 19, cols = 128, group = 64;
  const std::array<int8_t, 4> levels = {-3, -1, 1, 3};
  Rng rng(8);
  std::vector<uint8_t> codes(rows * cols);
  for (auto& c : codes) c = static_cast<uint8_t>(rng.below(4));
  const uint16_t half_scale = float_to_fp16(0.5f);
  const std::vector<float> x = random_activations(1, cols, 4);
  ActivationBatch in(1, cols);
  in.set(x.data(), 1, cols);
  for (const IsaVariant& v : isa_variants()) {
    for (const bool amd : {false, true}) {
      CpuFeatures cpu = v.cpu;
      cpu.vendor_amd = amd;
      const auto m = make_int2_matmul(
          rows, cols, group, levels,
          [&](int64_t r, uint8_t* c, uint16_t* s) {
            std::copy(&codes[r * cols], &codes[r * cols] + cols, c);
            s[0] = s[1] = half_scale;
          },
          cpu, pool);
      std::vector<float> y(rows);
      m->forward(in, y.data(), pool);
      for (int64_t r = 0; r < rows; ++r) {
        float acc = 0;
        for (int64_t g = 0; g < 2; ++g) {
          int32_t isum = 0;
          for (int64_t k = g * group; k < (g + 1) * group; ++k) isum += levels[codes[r * cols + k]] * in.q()[k];
          acc += 0.5f * static_cast<float>(isum);
        }
        EXPECT_EQ(y[r], acc * (1.0f / in.scale()[0])) << m->kernel_name() << (amd ? " (AMD)" : "") << " row " << r;
      }
    }
  }
}

TEST(Int2Kernel, RejectsWhatItCannotComputeExactly) {
  ThreadPool pool(1);
  CpuFeatures plain = cpu_features();
  plain.avx512f = plain.avx512vnni = plain.avx_vnni = false;
  auto none = [](int64_t, uint8_t*, uint16_t*) {};
  if (plain.has_avx2_level()) {
    EXPECT_THROW(make_int2_matmul(16, 64, 64, {-128, 0, 1, 127}, none, plain, pool), Error);
  }
  if (plain.has_neon_level()) {  // sdot's weights are u - 128: any int8 levels
    EXPECT_EQ(make_int2_matmul(16, 64, 64, {-128, 0, 1, 127}, none, plain, pool)->kernel_name(), "int2/neon-dotprod");
  }
  EXPECT_THROW(make_int2_matmul(16, 96, 64, {-1, 0, 1, 2}, none, cpu_features(), pool), Error);  // K % group
  EXPECT_THROW(make_int2_matmul(16, 1 << 20, 1 << 20, {-128, 0, 1, 127}, none, cpu_features(), pool), Error);
  EXPECT_EQ(find_kernel_family("int2")->score({"w", GgmlType::Q4_0, 16, 64, nullptr}, cpu_features()), 0);
}

}  // namespace
}  // namespace lowbit::test
