#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <tuple>
#include <vector>

#include "core/half.h"
#include "core/rng.h"
#include "kernels/dispatch.h"
#include "kernels/k_quant_q8k.h"
#include "quant/q4_k.h"
#include "quant/q6_k.h"

namespace lowbit {
namespace {

// Random Q4_K rows with every bit random (values, 6-bit scales and mins), and
// sane fp16 d and dmin; `extreme` sets every value, scale and min to its largest.
std::vector<uint8_t> random_q4_k_rows(int64_t rows, int64_t cols, uint64_t seed, bool extreme = false) {
  Rng rng(seed);
  std::vector<uint8_t> data(static_cast<size_t>(rows * cols / 256 * sizeof(BlockQ4_K)));
  for (auto& b : data) b = extreme ? 0xFF : static_cast<uint8_t>(rng.next_u32());
  for (size_t i = 0; i < data.size(); i += sizeof(BlockQ4_K)) {
    const uint16_t d = float_to_fp16(static_cast<float>(rng.normal()) * 0.01f);
    const uint16_t dmin = float_to_fp16(static_cast<float>(rng.normal()) * 0.01f);
    std::memcpy(&data[i + offsetof(BlockQ4_K, d)], &d, 2);
    std::memcpy(&data[i + offsetof(BlockQ4_K, dmin)], &dmin, 2);
  }
  return data;
}

TEST(Q4KQ8KKernel, MatchesTheInt8ReferenceBitwise) {
  const KernelFamily* f = find_kernel_family("q4_k_q8k");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->lossless) << "int8 activations approximate the float q4_k";
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the q4_k_q8k kernel cannot run here";
  ThreadPool pool(2);
  for (const auto& [n, k, tokens, extreme] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{
           {1, 256, 1, false}, {37, 512, 1, false}, {100, 2560, 3, false}, {16, 1024, 8, false}, {5, 6912, 2, true}}) {
    const auto data = random_q4_k_rows(n, k, static_cast<uint64_t>(n * k), extreme);
    const WeightView w{"blk.0.ffn_up.weight", GgmlType::Q4_K, n, k, data.data()};
    EXPECT_EQ(make_matmul(w, "auto", pool)->kernel_name().rfind("q4_k/", 0), 0u) << "auto keeps the float kernel";
    const auto m = make_matmul(w, "q4_k_q8k", pool);
    EXPECT_EQ(m->kernel_name(), "q4_k_q8k/avx2");
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
        const float want = dot_q4_k_q8k(data.data() + r * (k / 256) * sizeof(BlockQ4_K), q.data(), d.data(), k);
        ASSERT_EQ(float_to_bits(y[t * n + r]), float_to_bits(want)) << "n=" << n << " k=" << k << " t=" << t << " r=" << r;
      }
    }
  }
}

TEST(Q4KQ8KKernel, DeclinesOtherMatrices) {
  const KernelFamily* f = find_kernel_family("q4_k_q8k");
  ASSERT_NE(f, nullptr);
  const auto rows = random_q4_k_rows(16, 256, 1);
  EXPECT_EQ(f->score({"w", GgmlType::Q6_K, 16, 256, rows.data()}, cpu_features()), 0) << "Q4_K only";
  EXPECT_EQ(f->score({"w", GgmlType::Q4_K, 16, 256, rows.data()}, CpuFeatures{}), 0) << "AVX2 only";
  ThreadPool pool(1);
  // Forced on a matrix it cannot take, auto's choice runs it.
  EXPECT_EQ(make_matmul({"w", GgmlType::Q4_K, 16, 256, rows.data()}, "q4_k_q8k", pool, CpuFeatures{})->kernel_name(),
            make_matmul({"w", GgmlType::Q4_K, 16, 256, rows.data()}, "auto", pool, CpuFeatures{})->kernel_name());
}

}  // namespace
}  // namespace lowbit
