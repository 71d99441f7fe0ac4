// The cost of one empty parallel region on the engine's pool (design.md rule 4;
// the AI-PC paper counts ~1 us of OpenMP fork/join per GEMV on its machines).
// Every matmul of a token pays it once, ~7 per layer.
#include <benchmark/benchmark.h>

#include "core/thread_pool.h"

namespace lowbit {
namespace {

void BM_EmptyRunOnAll(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  for (auto _ : state) pool.run_on_all([](int, int) {});
}
BENCHMARK(BM_EmptyRunOnAll)->Arg(1)->Arg(2)->UseRealTime();

// parallel_for over as many one-item chunks as threads: the shape of a GEMV split.
void BM_EmptyParallelFor(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  ThreadPool pool(threads);
  for (auto _ : state) pool.parallel_for(threads * 4, 1, [](int64_t, int64_t, int) {});
}
BENCHMARK(BM_EmptyParallelFor)->Arg(2)->UseRealTime();

}  // namespace
}  // namespace lowbit
