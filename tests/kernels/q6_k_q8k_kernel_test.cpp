#include <gtest/gtest.h>

#include <vector>

#include "core/half.h"
#include "core/rng.h"
#include "kernels/dispatch.h"
#include "kernels/k_quant_q8k.h"
#include "quant/q6_k.h"

namespace lowbit {
namespace {

// Random Q6_K rows with every bit random, scales included (-128 .. 127), and
// sane fp16 d.
std::vector<uint8_t> random_q6_k_rows(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> data(static_cast<size_t>(rows * cols / 256 * sizeof(BlockQ6_K)));
  for (auto& b : data) b = static_cast<uint8_t>(rng.next_u32());
  for (size_t i = 0; i < data.size(); i += sizeof(BlockQ6_K)) {
    const uint16_t d = float_to_fp16(static_cast<float>(rng.normal()) * 0.01f);
    std::memcpy(&data[i + offsetof(BlockQ6_K, d)], &d, 2);
  }
  return data;
}

TEST(Q6KQ8KKernel, MatchesTheInt8ReferenceBitwise) {
  const KernelFamily* f = find_kernel_family("q6_k_q8k");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->lossless) << "int8 activations approximate the float q6_k";
  const CpuFeatures& cpu = cpu_features();
  if (!(cpu.has_avx512_level() && cpu.avx512vnni)) {
    // Without AVX-512 VNNI the family must decline, and auto falls back to the float kernel.
    const auto rows = random_q6_k_rows(16, 256, 1);
    EXPECT_EQ(f->score({"w", GgmlType::Q6_K, 16, 256, rows.data()}, cpu), 0);
    ThreadPool pool(1);
    EXPECT_EQ(make_matmul({"w", GgmlType::Q6_K, 16, 256, rows.data()}, "q6_k_q8k", pool)->kernel_name().rfind("q6_k/", 0),
              0u) << "forcing it on a CPU without AVX-512 VNNI falls back to auto's choice";
    return;
  }
  ThreadPool pool(2);
  for (const auto& [n, k, tokens] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 256, 1}, {37, 512, 1}, {100, 2560, 3}, {16, 1024, 8}}) {
    const auto data = random_q6_k_rows(n, k, static_cast<uint64_t>(n * k));
    const WeightView w{"head", GgmlType::Q6_K, n, k, data.data()};
    EXPECT_EQ(make_matmul(w, "auto", pool)->kernel_name().rfind("q6_k/", 0), 0u) << "auto keeps the float kernel";
    const auto m = make_matmul(w, "q6_k_q8k", pool);
    EXPECT_EQ(m->kernel_name(), "q6_k_q8k/avx512-vnni");
    Rng rng(static_cast<uint64_t>(k));
    std::vector<float> x(static_cast<size_t>(tokens * k));
    for (auto& v : x) v = static_cast<float>(rng.normal());
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
        const float want = dot_q6_k_q8k(data.data() + r * (k / 256) * sizeof(BlockQ6_K), q.data(), d.data(), k);
        ASSERT_EQ(float_to_bits(y[t * n + r]), float_to_bits(want)) << "n=" << n << " k=" << k << " t=" << t << " r=" << r;
      }
    }
  }
}

}  // namespace
}  // namespace lowbit
