// The float-accumulating kernels ("f16" for an F16 output head, "q4_k" for a
// Q4_K matrix) for several tokens at once, one thread: a 16384 x 2560 matrix
// (84 MB as F16, read from memory each call) times 4 to 512 tokens, as 8 to
// 32 sequences decoding together, a prefill or a perplexity run's 512
// positions give it. Counter: multiply-adds per second ("MAC/s"), to set
// against the core's FMA peak (16 lanes x 2 per cycle with AVX-512).
#include <benchmark/benchmark.h>

#include <vector>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/dispatch.h"
#include "kernels/matmul.h"
#include "quant/weight_format.h"

namespace lowbit {
namespace {

constexpr int64_t kRows = 16384, kCols = 2560;

void time_tokens(benchmark::State& state, GgmlType type, const char* kernel) {
  const int64_t tokens = state.range(0);
  Rng rng(3);
  const int64_t row_bytes = ggml_row_bytes(type, kCols);
  std::vector<uint8_t> w(static_cast<size_t>(kRows * row_bytes));
  std::vector<float> row(static_cast<size_t>(kCols));
  for (int64_t r = 0; r < kRows; ++r) {
    for (auto& v : row) v = static_cast<float>(rng.normal()) * 0.05f;
    weight_format(type).quantize_row(row.data(), w.data() + r * row_bytes, kCols);
  }
  std::vector<float> x(static_cast<size_t>(tokens * kCols)), y(static_cast<size_t>(tokens * kRows));
  for (auto& v : x) v = static_cast<float>(rng.normal());
  ThreadPool pool(1);
  const auto m = make_matmul({"w", type, kRows, kCols, w.data()}, kernel, pool);
  ActivationBatch in(tokens, kCols);
  in.set(x.data(), tokens, kCols);
  for (auto _ : state) {
    m->forward(in, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(kRows * kCols * tokens),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(m->kernel_name());
}

void BM_F16MatmulTokens(benchmark::State& state) { time_tokens(state, GgmlType::F16, "f16"); }
void BM_Q4KMatmulTokens(benchmark::State& state) { time_tokens(state, GgmlType::Q4_K, "q4_k"); }
const auto kTokens = [](benchmark::internal::Benchmark* b) {
  for (const int t : {4, 8, 10, 12, 16, 24, 32, 64, 512}) b->Arg(t);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
};
BENCHMARK(BM_F16MatmulTokens)->Apply(kTokens);
BENCHMARK(BM_Q4KMatmulTokens)->Apply(kTokens);

}  // namespace
}  // namespace lowbit
