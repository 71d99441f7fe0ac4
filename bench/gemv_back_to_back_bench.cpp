// One GEMV called back to back on a warm pool, as decode calls them: what the
// second thread buys on small matrices, where the split and the hand-off
// weigh as much as the streaming. Weights are random I2_S codes; each matrix is
// bigger than L2, so most bytes still come from L3 or memory.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/aligned_buffer.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/dispatch.h"
#include "tools/bench_weights.h"

namespace lowbit {
namespace {

// Times m (made on `pool`) on one random token, back to back.
void time_gemv(benchmark::State& state, const Matmul& m, ThreadPool& pool, Rng& rng) {
  const int64_t k = m.cols();
  std::vector<float> x(static_cast<size_t>(k)), y(static_cast<size_t>(m.rows()));
  for (auto& v : x) v = static_cast<float>(rng.below(1000)) / 500.0f - 1.0f;
  ActivationBatch in(1, k);
  for (auto _ : state) {
    in.set(x.data(), 1, k);  // quantized again per call, as decode does
    m.forward(in, y.data(), pool);
  }
  state.SetBytesProcessed(state.iterations() * m.weight_bytes());
}

// The ternary kernels over the same random I2_S weights (each in its own layout).
void BM_TernaryGemvBackToBack(benchmark::State& state, const char* kernel) {
  const int64_t n = state.range(0), k = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  ThreadPool pool(threads);
  Rng rng(1);
  const std::vector<uint8_t> bytes = tools::random_i2s(n, k, rng);
  std::unique_ptr<Matmul> m;
  {
    HugePageScope huge_pages;
    m = make_matmul({"bench", GgmlType::I2_S, n, k, bytes.data()}, kernel, pool);
  }
  if (m->kernel_name().rfind(kernel, 0) != 0) return state.SkipWithError("kernel does not run on this CPU");
  time_gemv(state, *m, pool, rng);
}
const auto kTernaryShapes = [](benchmark::internal::Benchmark* b) {
  b->Args({256, 2560, 1})
      ->Args({640, 2560, 1})
      ->Args({640, 2560, 2})
      ->Args({2560, 2560, 1})
      ->Args({2560, 2560, 2})
      ->Args({6912, 2560, 1})
      ->Args({6912, 2560, 2})
      ->UseRealTime();
};
BENCHMARK_CAPTURE(BM_TernaryGemvBackToBack, i2s, "i2s")->Apply(kTernaryShapes);
BENCHMARK_CAPTURE(BM_TernaryGemvBackToBack, tl2v, "tl2v")->Apply(kTernaryShapes);
BENCHMARK_CAPTURE(BM_TernaryGemvBackToBack, int2, "int2")->Apply(kTernaryShapes);

// The F16 head's kernel: 64 rows of 2560 (320 KiB) stay in L2, so this is the
// conversion + FMA rate; more rows stream from memory.
void BM_F16GemvBackToBack(benchmark::State& state) {
  const int64_t n = state.range(0), k = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  ThreadPool pool(threads);
  Rng rng(1);
  std::vector<uint16_t> w(static_cast<size_t>(n * k));
  for (auto& v : w) v = static_cast<uint16_t>(0x3000 + rng.below(0x1000));  // 0.125 .. 0.5, random mantissas
  std::unique_ptr<Matmul> m;
  {
    HugePageScope huge_pages;
    m = make_matmul({"bench", GgmlType::F16, n, k, reinterpret_cast<const uint8_t*>(w.data())}, "f16", pool);
  }
  time_gemv(state, *m, pool, rng);
}
BENCHMARK(BM_F16GemvBackToBack)
    ->Args({64, 2560, 1})
    ->Args({4096, 2560, 1})
    ->Args({4096, 2560, 2})
    ->Args({128256, 2560, 1})
    ->Args({128256, 2560, 2})
    ->UseRealTime();

}  // namespace
}  // namespace lowbit
