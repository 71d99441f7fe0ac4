#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/rng.h"
#include "kernels/aipc_families.h"
#include "kernels/int1_lut.h"
#include "ternary_test_support.h"
#include "vnni4_test_support.h"

namespace lowbit::test {
namespace {

TEST(Int1LutKernel, Q1_0MatchesReferenceBitExact) {
  // Long rows too (K = 6912, 8320): several int16 windows per row, tables past L1.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 128},    {17, 384},  {33, 2560},
                                                            {640, 2560}, {13, 6912}, {3, 8320}};
  for (const auto& [rows, cols] : shapes) {
    // Tokens go 4 at a time, the last group with what is left: 7 = 4 + 3, 5 = 4 + 1.
    for (int64_t tokens : {1, 2, 4, 5, 7}) {
      const auto data = random_scaled_blocks(GgmlType::Q1_0, rows, cols, rows * 5 + cols + tokens);
      const auto names = expect_family_matches_reference("int1_lut", GgmlType::Q1_0, data, rows, cols, tokens, tokens);
      EXPECT_EQ(names.size(), 2 * isa_variants().size());
      for (const auto& n : names) EXPECT_EQ(n, "int1_lut/avx2");
    }
  }
}

TEST(Int1LutKernel, KernelsExactAtActivationExtremes) {
  const auto kernels = runnable({{Vnni4Isa::Avx2, {"int1_lut/avx2", int1_lut_gemv_avx2}},
                                 {Vnni4Isa::Avx2, {"int1_lut/avx2, 4 tokens", tokens_as_one<int1_lut_tokens_avx2, 4>}},
                                 {Vnni4Isa::Avx2, {"int1_lut/avx2, 3 tokens", tokens_as_one<int1_lut_tokens_avx2, 3>}},
                                 {Vnni4Isa::Avx2, {"int1_lut/avx2, 2 tokens", tokens_as_one<int1_lut_tokens_avx2, 2>}}});
  const auto lut = Vnni4Bits::OneLookup;
  expect_kernels_exact(lut, kernels, 2, {-1, 1}, -1, nullptr, 45, 384, 128, 3);
  expect_kernels_exact(lut, kernels, 2, {-1, 1}, -1, nullptr, 16, 1024, 1024, 4);
  expect_kernels_exact(lut, kernels, 2, {-1, 1}, -1, nullptr, 17, 80, 16, 5);  // one-step groups
  // Every bit 1 and every activation -128: each entry -512, each int16 sum
  // -32768 at the end of its 32-step window, the widest it can be.
  expect_kernels_exact(lut, kernels, 2, {-1, 1}, -1, nullptr, 16, 4096, 4096, 6, 1);
  expect_kernels_exact(lut, kernels, 2, {-1, 1}, -1, nullptr, 16, 4096, 512, 7, 1);
}

TEST(Int1LutKernel, TablesBuiltBitwiseAsTheReference) {
  if (!cpu_features().has_avx2_level()) GTEST_SKIP() << "needs AVX2";
  Rng rng(11);
  for (int64_t k : {16, 48, 2560, 6912}) {
    AlignedBuffer<int8_t> x(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i)
      x.data()[i] = i < 64 ? -128 : i < 128 ? 127 : static_cast<int8_t>(rng.next_u32());
    AlignedBuffer<uint8_t> want(static_cast<size_t>(int1_lut_table_bytes(k))), got(want.size());
    int1_lut_tables_ref(x.data(), k, want.data());
    std::memset(got.data(), 0xA5, got.size());
    int1_lut_tables_avx2(x.data(), k, got.data());
    ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size()), 0) << "k = " << k;
  }
  // A few entries by hand: unit 0 of x = 1, 2, 4, 8, -16, ...: quad 0 entry
  // 0b1011 = x0 + x1 + x3 = 11 in low byte 11 (offset 0 + 11), high byte 0.
  AlignedBuffer<int8_t> x(16);
  for (int i = 0; i < 16; ++i) x.data()[i] = static_cast<int8_t>(i < 4 ? 1 << i : -16 * i);
  AlignedBuffer<uint8_t> t(static_cast<size_t>(int1_lut_table_bytes(16)));
  int1_lut_tables_ref(x.data(), 16, t.data());
  EXPECT_EQ(t.data()[11], 11);
  EXPECT_EQ(t.data()[32 + 11], 0);
  // Quad 1 (x4..x7 = -64, -80, -96, -112), entry 15 = -352 = 0xFEA0: low
  // byte at 64 + 15, high byte at 96 + 15.
  EXPECT_EQ(t.data()[64 + 15], 0xA0);
  EXPECT_EQ(t.data()[96 + 15], 0xFE);
}

TEST(Int1LutKernel, OnlyQ1_0AndAutoBelowAvx512) {
  const KernelFamily* f = find_kernel_family("int1_lut");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->score({"w", GgmlType::Q2_0, 16, 128, nullptr}, cpu_features()), 0);
  for (const IsaVariant& v : isa_variants()) {
    const WeightView w{"w", GgmlType::Q1_0, 16, 128, nullptr};
    const Vnni4Isa isa = vnni4_isa(v.cpu);
    const bool below_avx512 = isa == Vnni4Isa::Avx2 || isa == Vnni4Isa::AvxVnni;
    EXPECT_EQ(f->score(w, v.cpu) > find_kernel_family("int1")->score(w, v.cpu), below_avx512) << v.name;
  }
}

}  // namespace
}  // namespace lowbit::test
