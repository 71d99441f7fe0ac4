// The decoder's per-token row ops (VectorOps) on one row hot in cache, at the
// 2B-4T widths (2560, 6912): what each costs per element where a prefill runs
// them between its matmuls, a row at a time.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/rng.h"
#include "kernels/vector_ops.h"

namespace lowbit {
namespace {

std::vector<float> random_row(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = 8.0f * rng.uniform_f() - 4.0f;
  return x;
}

void BM_RowQuantizeAbsmax(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto x = random_row(n, 1);
  std::vector<int8_t> q(static_cast<size_t>(n));
  const VectorOps& ops = *vector_ops();
  for (auto _ : state) benchmark::DoNotOptimize(ops.quantize_absmax(x.data(), n, q.data()));
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_RowQuantizeAbsmax)->Arg(2560)->Arg(6912);

void BM_RowRmsNorm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto x = random_row(n, 2), w = random_row(n, 3);
  std::vector<float> out(static_cast<size_t>(n));
  const VectorOps& ops = *vector_ops();
  for (auto _ : state) {
    ops.rms_norm(x.data(), w.data(), n, 1e-5f, out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_RowRmsNorm)->Arg(2560)->Arg(6912);

void BM_RowRelu2Gate(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto g = random_row(n, 4);
  const auto u = random_row(n, 5);
  const VectorOps& ops = *vector_ops();
  for (auto _ : state) {
    ops.relu2_gate(g.data(), u.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_RowRelu2Gate)->Arg(2560)->Arg(6912);

}  // namespace
}  // namespace lowbit
