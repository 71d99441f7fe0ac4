// forward_together: one parallel region over several matrices' work units
// must give bitwise what one forward per matrix gives, whatever the chunk
// boundaries, and fall back to forward for kernels without units.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/dispatch.h"
#include "ternary_test_support.h"

namespace lowbit {
namespace {

using test::encode_ternary;
using test::random_activations;
using test::random_ternary;

struct Matrices {
  std::vector<std::vector<uint8_t>> bytes;  // kept alive: kernels may point into them
  std::vector<std::unique_ptr<Matmul>> mats;
};

// I2_S matrices of `rows` x k with different scales, made by `kernel`.
Matrices make(const std::vector<int64_t>& rows, int64_t k, const std::string& kernel, ThreadPool& pool) {
  Matrices m;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto t = random_ternary(rows[i], k, 100 + i);
    m.bytes.push_back(encode_ternary(GgmlType::I2_S, t, rows[i], k, 0.5f + static_cast<float>(i)));
    const WeightView w{"blk.0.m" + std::to_string(i), GgmlType::I2_S, rows[i], k, m.bytes.back().data()};
    m.mats.push_back(kernel == "ref" ? make_reference_matmul(w) : make_matmul(w, kernel, pool));
  }
  return m;
}

void expect_same_as_separate(const std::vector<const Matmul*>& ms, int64_t k, int64_t tokens, ThreadPool& pool) {
  const auto x = random_activations(tokens, k, 7);
  ActivationBatch in(tokens, k);
  std::vector<std::vector<float>> separate, together;
  std::vector<float*> ys;
  for (const Matmul* m : ms) {
    separate.emplace_back(static_cast<size_t>(tokens * m->rows()));
    together.emplace_back(static_cast<size_t>(tokens * m->rows()), -1.0f);
    in.set(x.data(), tokens, k);
    m->forward(in, separate.back().data(), pool);
  }
  for (auto& y : together) ys.push_back(y.data());
  in.set(x.data(), tokens, k);
  forward_together(ms, in, ys, pool);
  for (size_t i = 0; i < ms.size(); ++i)
    for (size_t j = 0; j < separate[i].size(); ++j)
      ASSERT_EQ(together[i][j], separate[i][j]) << ms[i]->kernel_name() << " matrix " << i << " value " << j;
}

TEST(ForwardTogether, SharedRegionMatchesOneForwardPerMatrixBitwise) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
#if LOWBIT_X86_KERNELS
    for (const char* kernel : {"i2s", "tl2_1", "int2"}) {
#else
    for (const char* kernel : {"i2s"}) {  // tl2_1 and int2 are x86 code
#endif
      // Row counts that are not multiples of a tile, so chunks straddle matrices mid-range.
      const Matrices m = make({40, 17, 33, 160}, 256, kernel, pool);
      std::vector<const Matmul*> ms;
      for (const auto& p : m.mats) {
        ASSERT_GT(p->work_units(), 0) << p->kernel_name();
        ms.push_back(p.get());
      }
      for (int64_t tokens : {1, 3, 9}) expect_same_as_separate(ms, 256, tokens, pool);
    }
  }
}

#if LOWBIT_X86_KERNELS  // int2 and the pairs are AVX2 and AVX-512 code
// Kernels of different layouts in one region: int2 (one group per row, S_g
// from the batch's group sums) between ternary tiles.
TEST(ForwardTogether, MixedKernelsShareOneRegion) {
  ThreadPool pool(2);
  const Matrices a = make({40, 17}, 256, "i2s", pool);
  const Matrices b = make({33, 160}, 256, "int2", pool);
  for (int64_t tokens : {1, 4})
    expect_same_as_separate({a.mats[0].get(), b.mats[0].get(), a.mats[1].get(), b.mats[1].get()}, 256, tokens, pool);
}

// `kernel` made for `pairs` reads a region's units in pairs for these token
// counts, unit v of the first half beside unit v + half of the second
// (Matmul::forward_pair), across matrices, spans (K = 4224: two) and partial
// last tiles; made for `alone` it reads them tile after tile. The two must
// give the same bits.
void expect_pairs_match_one_forward_per_matrix(const std::string& kernel, const CpuFeatures& pairs,
                                               const CpuFeatures& alone, const std::vector<int64_t>& paired_tokens) {
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> regions = {
      {{176, 48, 48}, 384}, {{48, 64}, 256}, {{64, 64}, 2560}, {{80}, 4224}, {{48}, 128}, {{16}, 256}};
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (const auto& [rows, k] : regions) {
      Matrices paired, single;
      std::vector<const Matmul*> ms, ms_single;
      for (size_t i = 0; i < rows.size(); ++i) {
        const auto t = random_ternary(rows[i], k, 300 + i);
        paired.bytes.push_back(encode_ternary(GgmlType::I2_S, t, rows[i], k, 0.5f + static_cast<float>(i)));
        const WeightView w{"blk.0.m" + std::to_string(i), GgmlType::I2_S, rows[i], k, paired.bytes.back().data()};
        paired.mats.push_back(find_kernel_family(kernel)->make(w, pairs, pool));
        single.mats.push_back(find_kernel_family(kernel)->make(w, alone, pool));
        ms.push_back(paired.mats.back().get());
        ms_single.push_back(single.mats.back().get());
      }
      for (const int64_t tokens : paired_tokens) {
        std::vector<std::vector<float>> y, y_single;
        std::vector<float*> ys, ys_single;
        for (size_t i = 0; i < rows.size(); ++i) {
          ASSERT_TRUE(ms[0]->pairs_with(*ms[i], tokens)) << ms[0]->kernel_name() << ", " << tokens << " tokens";
          ASSERT_FALSE(ms_single[0]->pairs_with(*ms_single[i], tokens)) << ms_single[0]->kernel_name();
          y.emplace_back(static_cast<size_t>(rows[i] * tokens), -1.0f);
          y_single.emplace_back(static_cast<size_t>(rows[i] * tokens), -2.0f);
        }
        for (size_t i = 0; i < rows.size(); ++i) ys.push_back(y[i].data()), ys_single.push_back(y_single[i].data());
        const auto x = random_activations(tokens, k, 9 + static_cast<uint64_t>(tokens));
        ActivationBatch in(tokens, k);
        in.set(x.data(), tokens, k);
        forward_together(ms, in, ys, pool);
        in.set(x.data(), tokens, k);
        forward_together(ms_single, in, ys_single, pool);
        for (size_t i = 0; i < rows.size(); ++i)
          for (int64_t j = 0; j < rows[i] * tokens; ++j)
            ASSERT_EQ(y[i][j], y_single[i][j]) << kernel << ": matrix " << i << " of " << rows.size() << ", K = " << k
                                               << ", token " << j / rows[i] << ", row " << j % rows[i] << ", "
                                               << tokens << " tokens, threads " << threads;
      }
      ASSERT_FALSE(ms[0]->pairs_with(*ms[0], paired_tokens.back() + 1)) << ms[0]->kernel_name();
      for (int64_t tokens : {1, 2}) expect_same_as_separate(ms, k, tokens, pool);
    }
  }
}

// On AMD, where the ISA's kernels pair (for these token counts): not on Intel.
void expect_amd_pairs_match_one_forward_per_matrix(const std::string& kernel, const CpuFeatures& cpu,
                                                   const std::vector<int64_t>& paired_tokens = {1}) {
  CpuFeatures amd = cpu, other = cpu;
  amd.vendor_amd = true;
  other.vendor_amd = false;
  expect_pairs_match_one_forward_per_matrix(kernel, amd, other, paired_tokens);
}

// i2s pairs on plain AVX2 (AVX-512 and AVX-VNNI masked off here).
TEST(ForwardTogether, I2sPairedUnitsMatchOneForwardPerMatrixBitwise) {
  CpuFeatures cpu = cpu_features();
  ASSERT_TRUE(cpu.has_avx2_level()) << "no AVX2: i2s cannot run here";
  cpu.avx512f = cpu.avx512bw = cpu.avx512vl = cpu.avx512dq = cpu.avx512vnni = cpu.avx512vbmi = false;
  cpu.avx_vnni = false;
  expect_amd_pairs_match_one_forward_per_matrix("i2s", cpu);
}

// i2s with AVX-512 pairs on Intel, for 1 to 8 tokens (2 to 8 sequences
// decoding together; 5 to 8 with one accumulator per tile and token), with
// VNNI and without.
TEST(ForwardTogether, I2sAvx512PairedTokensMatchOneForwardPerMatrixBitwise) {
  const CpuFeatures cpu = cpu_features();
  if (!cpu.has_avx512_level()) GTEST_SKIP() << "i2s's AVX-512 pairs need AVX-512, which this CPU lacks";
  for (const bool vnni : {true, false}) {
    CpuFeatures intel = cpu, amd = cpu;
    intel.avx512vnni = amd.avx512vnni = vnni && cpu.avx512vnni;
    intel.amx_int8 = amd.amx_int8 = false;
    intel.vendor_amd = false;
    amd.vendor_amd = true;
    expect_pairs_match_one_forward_per_matrix("i2s", intel, amd, {1, 2, 3, 4, 5, 6, 7, 8});
  }
}

// tl2v pairs 1 to 8 tokens on AMD (2 to 8 sequences decoding together: the
// two-tile loop with the tiles far apart), with VNNI and without.
TEST(ForwardTogether, Tl2vPairedUnitsMatchOneForwardPerMatrixBitwise) {
  const CpuFeatures cpu = cpu_features();
  if (!cpu.has_avx512_level() || !cpu.avx512vbmi) GTEST_SKIP() << "tl2v needs AVX-512 VBMI, which this CPU lacks";
  for (const bool vnni : {true, false}) {
    CpuFeatures c = cpu;
    c.avx512vnni = vnni && cpu.avx512vnni;
    expect_amd_pairs_match_one_forward_per_matrix("tl2v", c, {1, 2, 3, 4, 5, 6, 7, 8});
  }
}
#endif

TEST(ForwardTogether, KernelsWithoutUnitsFallBackToForward) {
  ThreadPool pool(2);
  const Matrices a = make({24, 8}, 128, "i2s", pool);
  const Matrices r = make({16}, 128, "ref", pool);
  ASSERT_EQ(r.mats[0]->work_units(), 0);
  expect_same_as_separate({a.mats[0].get(), r.mats[0].get(), a.mats[1].get()}, 128, 2, pool);
}

TEST(ForwardTogether, RejectsMismatchedOutputs) {
  ThreadPool pool(1);
  const Matrices a = make({8, 8}, 128, "i2s", pool);
  std::vector<float> y(8);
  const std::vector<const Matmul*> ms = {a.mats[0].get(), a.mats[1].get()};
  const std::vector<float*> ys = {y.data()};
  ActivationBatch in(1, 128);
  const std::vector<float> x(128, 1.0f);
  in.set(x.data(), 1, 128);
  EXPECT_THROW(forward_together(ms, in, ys, pool), Error);
}

}  // namespace
}  // namespace lowbit
