// The k-quant x int8-activation kernels (k_quant_q8k.h) against their scalar
// references, bit for bit.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <tuple>
#include <vector>

#include "core/half.h"
#include "core/rng.h"
#include "kernels/dispatch.h"
#include "kernels/k_quant_q8k.h"
#include "quant/iq4_xs.h"
#include "quant/q2_k.h"
#include "quant/q3_k.h"
#include "quant/q4_k.h"
#include "quant/q5_k.h"
#include "quant/q6_k.h"

namespace lowbit {
namespace {

// Random rows of `Block` with every bit random (values, scales, mins), then
// sane fp16 scales at the given offsets; `extreme` sets every other byte to 0xFF
// (Q4_K, Q5_K: every value, scale and min at its largest; Q6_K: every value 63).
template <class Block>
std::vector<uint8_t> random_rows(int64_t rows, int64_t cols, uint64_t seed, std::initializer_list<size_t> fp16_at,
                                 bool extreme = false) {
  Rng rng(seed);
  std::vector<uint8_t> data(static_cast<size_t>(rows * cols / 256 * sizeof(Block)));
  for (auto& b : data) b = extreme ? 0xFF : static_cast<uint8_t>(rng.next_u32());
  for (size_t i = 0; i < data.size(); i += sizeof(Block))
    for (const size_t at : fp16_at) {
      const uint16_t d = float_to_fp16(static_cast<float>(rng.normal()) * 0.01f);
      std::memcpy(&data[i + at], &d, 2);
    }
  return data;
}

using DotQ8K = float (*)(const uint8_t* row, const int8_t* q, const float* dx, int64_t n);

// `kernel` forced on w gives kernel_name `name` and, for `tokens` random
// activations (+-1 where `extreme`, with an outlier), y bitwise `dot` of each
// row against the activations quantized per 256; auto keeps a float kernel
// whose name starts with `auto_prefix`.
void expect_matches_int8_reference(const WeightView& w, const std::string& kernel, const std::string& name,
                                   const std::string& auto_prefix, DotQ8K dot, size_t block_bytes, int64_t tokens,
                                   bool extreme, ThreadPool& pool, const CpuFeatures& cpu = cpu_features()) {
  const int64_t n = w.rows, k = w.cols;
  EXPECT_EQ(make_matmul(w, "auto", pool, cpu)->kernel_name().rfind(auto_prefix, 0), 0u) << "auto keeps the float kernel";
  const auto m = make_matmul(w, kernel, pool, cpu);
  EXPECT_EQ(m->kernel_name(), name);
  Rng rng(static_cast<uint64_t>(k));
  std::vector<float> x(static_cast<size_t>(tokens * k));
  for (auto& v : x) v = extreme ? (rng.below(2) ? 1.0f : -1.0f) : static_cast<float>(rng.normal());
  x[3] = 1000.0f;  // an outlier: most of its block quantizes to 0
  ActivationBatch in(tokens, k);
  in.set(x.data(), tokens, k);
  std::vector<float> y(static_cast<size_t>(tokens * n));
  m->forward(in, y.data(), pool);
  std::vector<int8_t> q(static_cast<size_t>(k));
  std::vector<float> d(static_cast<size_t>(k / 256));
  for (int64_t t = 0; t < tokens; ++t) {
    quantize_activations_q8k(x.data() + t * k, k, q.data(), d.data());
    for (int64_t r = 0; r < n; ++r) {
      const float want = dot(w.data + r * (k / 256) * static_cast<int64_t>(block_bytes), q.data(), d.data(), k);
      ASSERT_EQ(float_to_bits(y[t * n + r]), float_to_bits(want)) << name << " n=" << n << " k=" << k << " t=" << t
                                                                  << " r=" << r;
    }
  }
}

TEST(Q6KQ8KKernel, MatchesTheInt8ReferenceBitwise) {
  const KernelFamily* f = find_kernel_family("q6_k_q8k");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->lossless) << "int8 activations approximate the float q6_k";
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the q6_k_q8k kernel cannot run here";
  // Every ISA variant this CPU runs: AVX-512 VNNI where it has it, and AVX2.
  std::vector<std::pair<CpuFeatures, std::string>> variants;
  CpuFeatures avx2 = cpu_features();
  if (avx2.has_avx512_level() && avx2.avx512vnni) variants.emplace_back(avx2, "q6_k_q8k/avx512-vnni");
  avx2.avx512vnni = false;
  variants.emplace_back(avx2, "q6_k_q8k/avx2");
  ThreadPool pool(2);
  for (const auto& [cpu, name] : variants)
    for (const auto& [n, k, tokens, extreme] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{
             {1, 256, 1, false}, {37, 512, 1, false}, {100, 2560, 3, false}, {16, 1024, 8, false},
             {9, 512, 5, false}, {5, 6912, 2, true}, {3, 768, 7, true}}) {
      const auto data = random_rows<BlockQ6_K>(n, k, static_cast<uint64_t>(n * k), {offsetof(BlockQ6_K, d)}, extreme);
      expect_matches_int8_reference({"head", GgmlType::Q6_K, n, k, data.data()}, "q6_k_q8k", name, "q6_k/",
                                    dot_q6_k_q8k, sizeof(BlockQ6_K), tokens, extreme, pool, cpu);
    }
}

TEST(Q4KQ8KKernel, MatchesTheInt8ReferenceBitwise) {
  const KernelFamily* f = find_kernel_family("q4_k_q8k");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->lossless) << "int8 activations approximate the float q4_k";
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the q4_k_q8k kernel cannot run here";
  ThreadPool pool(2);
  for (const auto& [n, k, tokens, extreme] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{
           {1, 256, 1, false}, {37, 512, 1, false}, {100, 2560, 3, false}, {16, 1024, 8, false}, {9, 512, 5, false},
           {5, 6912, 2, true}, {3, 768, 7, true}}) {
    // Tokens go 4 at a time through one row (3 = 3, 5 = 4 + 1 alone, 7 = 4 + 3).
    const auto data = random_rows<BlockQ4_K>(n, k, static_cast<uint64_t>(n * k),
                                             {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)}, extreme);
    expect_matches_int8_reference({"blk.0.ffn_up.weight", GgmlType::Q4_K, n, k, data.data()}, "q4_k_q8k",
                                  "q4_k_q8k/avx2", "q4_k/", dot_q4_k_q8k, sizeof(BlockQ4_K), tokens, extreme, pool);
  }
}

TEST(Q5KQ8KKernel, MatchesTheInt8ReferenceBitwise) {
  const KernelFamily* f = find_kernel_family("q5_k_q8k");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->lossless) << "int8 activations approximate the float q4_k family";
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the q5_k_q8k kernel cannot run here";
  ThreadPool pool(2);
  for (const auto& [n, k, tokens, extreme] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{
           {1, 256, 1, false}, {37, 512, 1, false}, {100, 2560, 3, false}, {9, 512, 5, false}, {5, 6912, 2, true},
           {3, 768, 7, true}}) {
    const auto data = random_rows<BlockQ5_K>(n, k, static_cast<uint64_t>(n * k + 1),
                                             {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)}, extreme);
    expect_matches_int8_reference({"blk.0.ffn_up.weight", GgmlType::Q5_K, n, k, data.data()}, "q5_k_q8k",
                                  "q5_k_q8k/avx2", "q4_k/", dot_q5_k_q8k, sizeof(BlockQ5_K), tokens, extreme, pool);
  }
}

TEST(Q2KQ8KKernel, MatchesTheInt8ReferenceBitwise) {
  const KernelFamily* f = find_kernel_family("q2_k_q8k");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->lossless) << "int8 activations approximate the float q2_k";
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the q2_k_q8k kernel cannot run here";
  ThreadPool pool(2);
  for (const auto& [n, k, tokens, extreme] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{
           {1, 256, 1, false}, {37, 512, 1, false}, {100, 2560, 3, false}, {16, 1024, 8, false}, {9, 512, 5, false},
           {5, 6912, 2, true}, {3, 768, 7, true}}) {
    const auto data = random_rows<BlockQ2_K>(n, k, static_cast<uint64_t>(n * k + 2),
                                             {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)}, extreme);
    expect_matches_int8_reference({"blk.0.ffn_up.weight", GgmlType::Q2_K, n, k, data.data()}, "q2_k_q8k",
                                  "q2_k_q8k/avx2", "q2_k/", dot_q2_k_q8k, sizeof(BlockQ2_K), tokens, extreme, pool);
  }
}

TEST(Q3KQ8KKernel, MatchesTheInt8ReferenceBitwise) {
  const KernelFamily* f = find_kernel_family("q3_k_q8k");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->lossless) << "int8 activations approximate the float q3_k";
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the q3_k_q8k kernel cannot run here";
  ThreadPool pool(2);
  // extreme: every value 3, every scale code 63 (scale 31); the test's -4s and
  // -32s at the int32 limits are Q3_KQ8K.ExtremesStayExactInInt32's.
  for (const auto& [n, k, tokens, extreme] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{
           {1, 256, 1, false}, {37, 512, 1, false}, {100, 2560, 3, false}, {16, 1024, 8, false}, {9, 512, 5, false},
           {5, 6912, 2, true}, {3, 768, 7, true}}) {
    const auto data = random_rows<BlockQ3_K>(n, k, static_cast<uint64_t>(n * k + 3), {offsetof(BlockQ3_K, d)}, extreme);
    expect_matches_int8_reference({"blk.0.ffn_up.weight", GgmlType::Q3_K, n, k, data.data()}, "q3_k_q8k",
                                  "q3_k_q8k/avx2", "q3_k/", dot_q3_k_q8k, sizeof(BlockQ3_K), tokens, extreme, pool);
  }
}

TEST(Iq4XsQ8KKernel, MatchesTheInt8ReferenceBitwise) {
  const KernelFamily* f = find_kernel_family("iq4_xs_q8k");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->lossless) << "int8 activations approximate the float iq4_xs";
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the iq4_xs_q8k kernel cannot run here";
  ThreadPool pool(2);
  // extreme: every index 15 (113) and scale code 63 (scale 31); index 0 and
  // code 0 at the int32 limits are Iq4XsQ8K.ExtremesStayExactInInt32's.
  for (const auto& [n, k, tokens, extreme] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{
           {1, 256, 1, false}, {37, 512, 1, false}, {100, 2560, 3, false}, {16, 1024, 8, false}, {9, 512, 5, false},
           {5, 6912, 2, true}, {3, 768, 7, true}}) {
    const auto data = random_rows<BlockIq4Xs>(n, k, static_cast<uint64_t>(n * k + 4), {offsetof(BlockIq4Xs, d)}, extreme);
    expect_matches_int8_reference({"blk.0.ffn_up.weight", GgmlType::IQ4_XS, n, k, data.data()}, "iq4_xs_q8k",
                                  "iq4_xs_q8k/avx2", "iq4_xs/", dot_iq4_xs_q8k, sizeof(BlockIq4Xs), tokens, extreme,
                                  pool);
  }
}

TEST(Iq4XsQ8KKernel, PairLayoutPutsEachSubBlockInOneVector) {
  // Element e has index (7e + e / 32) % 16, placed as the file places it;
  // afterwards byte i of group p holds elements 64p + i and 64p + 32 + i.
  const auto index = [](int e) { return (7 * e + e / 32) % 16; };
  BlockIq4Xs b[2]{};
  for (auto& blk : b) {
    for (int j = 0; j < 8; ++j)
      for (int l = 0; l < 16; ++l)
        blk.qs[16 * j + l] = static_cast<uint8_t>(index(32 * j + l) | index(32 * j + l + 16) << 4);
    blk.d = 0x1234;
    blk.scales_h = 0xABCD;
  }
  iq4_xs_pair_layout(reinterpret_cast<uint8_t*>(b), 2);
  for (const auto& blk : b) {
    for (int p = 0; p < 4; ++p)
      for (int i = 0; i < 32; ++i)
        ASSERT_EQ(blk.qs[32 * p + i], index(64 * p + i) | index(64 * p + 32 + i) << 4) << p << " " << i;
    EXPECT_EQ(blk.d, 0x1234);
    EXPECT_EQ(blk.scales_h, 0xABCD);
  }
}

TEST(Q4KQ8KKernel, DeclinesOtherMatrices) {
  const KernelFamily* f = find_kernel_family("q4_k_q8k");
  ASSERT_NE(f, nullptr);
  const auto rows = random_rows<BlockQ4_K>(16, 256, 1, {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)});
  EXPECT_EQ(f->score({"w", GgmlType::Q6_K, 16, 256, rows.data()}, cpu_features()), 0) << "Q4_K only";
  EXPECT_EQ(f->score({"w", GgmlType::Q4_K, 16, 256, rows.data()}, CpuFeatures{}), 0) << "AVX2 only";
  ThreadPool pool(1);
  // Forced on a matrix it cannot take, auto's choice runs it.
  EXPECT_EQ(make_matmul({"w", GgmlType::Q4_K, 16, 256, rows.data()}, "q4_k_q8k", pool, CpuFeatures{})->kernel_name(),
            make_matmul({"w", GgmlType::Q4_K, 16, 256, rows.data()}, "auto", pool, CpuFeatures{})->kernel_name());
}

}  // namespace
}  // namespace lowbit
