// Prefill's ternary GEMM on one thread, 128 tokens, the 2B-4T shapes: the
// plain-AVX2 table lookup (i2s_lut_gemm.h) against the vpmaddubsw tile dots it
// replaces from 16 tokens and the scalar reference, on the same random weights.
// Counters: multiply-adds per second ("MAC/s"); weights stay in L3 or memory
// between iterations, as in a prefill's pass over a layer.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/aligned_buffer.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "core/cpu_features.h"
#include "kernels/dispatch.h"
#include "kernels/i2s_amx_gemm.h"
#include "kernels/matmul.h"
#include "kernels/i2s_lut_gemm.h"
#include "kernels/i2s_tile_dots.h"
#include "kernels/i2s_tiles.h"
#include "kernels/spanned_tiles.h"
#include "tools/bench_weights.h"

namespace lowbit {
namespace {

constexpr int64_t kTokens = 128;

struct Problem {
  int64_t n, k, stride;
  SpannedTiles<I2sTiles> tiles;
  std::vector<int8_t> q;  // [kTokens][stride]
  Problem(int64_t n_, int64_t k_) : n(n_), k(k_), stride((k_ + 63) / 64 * 64), tiles(n_, k_, 16, 252) {
    Rng rng(1);
    std::vector<int8_t> t(static_cast<size_t>(k));
    for (int64_t r = 0; r < n; ++r) {
      for (auto& v : t) v = static_cast<int8_t>(static_cast<int>(rng.below(3)) - 1);
      tiles.set_row(r, t.data());
    }
    q.assign(static_cast<size_t>(kTokens * stride), 0);
    for (int64_t i = 0; i < kTokens; ++i)
      for (int64_t c = 0; c < k; ++c) q[static_cast<size_t>(i * stride + c)] = static_cast<int8_t>(rng.below(255) - 127);
  }
};

void report(benchmark::State& state, const Problem& p) {
  state.counters["MAC/s"] =
      benchmark::Counter(static_cast<double>(p.n * p.k * kTokens), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_I2sPrefillLookup(benchmark::State& state) {
  if (!cpu_features().has_avx2_level()) return state.SkipWithError("no AVX2");
  const Problem p(state.range(0), state.range(1));
  int64_t sink_sum = 0;
  for (auto _ : state)
    i2s_lut_gemm_avx2(p.tiles, p.k, 0, (p.n + 15) / 16, p.q.data(), p.stride, kTokens,
                      [&](int64_t, int64_t, int, const int32_t* dots) { sink_sum += dots[0]; });
  benchmark::DoNotOptimize(sink_sum);
  report(state, p);
}

// The tile dots as TernaryMatmul drives them: 8 tokens per call, spans of a tile in turn.
void time_tile_dots(benchmark::State& state, I2sTileDots dots) {
  const Problem p(state.range(0), state.range(1));
  int32_t out[16 * kI2sMaxTokens];
  int64_t sink_sum = 0;
  for (auto _ : state)
    for (int64_t tile = 0; tile < (p.n + 15) / 16; ++tile)
      for (int64_t t0 = 0; t0 < kTokens; t0 += kI2sMaxTokens)
        for (int s = 0; s < p.tiles.count(); ++s) {
          const I2sTiles& span = p.tiles.spans[static_cast<size_t>(s)];
          dots(span.tile(tile), span.groups, p.q.data() + t0 * p.stride + p.tiles.starts[static_cast<size_t>(s)],
               p.stride, kI2sMaxTokens, out);
          sink_sum += out[0];
        }
  benchmark::DoNotOptimize(sink_sum);
  report(state, p);
}

// Plain AVX2 (vpmaddubsw).
void BM_I2sPrefillTileDots(benchmark::State& state) {
  if (!cpu_features().has_avx2_level()) return state.SkipWithError("no AVX2");
  time_tile_dots(state, i2s_tile_dots_avx2(false));
}

// AVX-512 VNNI (vpdpbusd), with the prefetch the model uses on Intel: prefill
// on AVX-512 CPUs without AMX (e.g. Zen 4 and 5).
void BM_I2sPrefillTileDotsAvx512Vnni(benchmark::State& state) {
  if (!cpu_features().has_avx512_level() || !cpu_features().avx512vnni)
    return state.SkipWithError("no AVX-512 VNNI");
  time_tile_dots(state, i2s_tile_dots_avx512(true, !cpu_features().vendor_amd));
}

// The AMX GEMM (CPUs with AMX-INT8) over the same tiles and tokens.
void BM_I2sPrefillAmx(benchmark::State& state) {
  if (!cpu_features().amx_int8) return state.SkipWithError("no AMX-INT8");
  const Problem p(state.range(0), state.range(1));
  // The activations in tile rows, as ActivationBatch lays them out once per batch.
  const std::vector<int64_t> cols = i2s_amx_block_columns(p.tiles);
  const int64_t block_bytes = static_cast<int64_t>(cols.size()) * 16 * 64;
  AlignedBuffer<int8_t> rows(static_cast<size_t>(kTokens / 16 * block_bytes));
  for (int64_t b = 0; b < kTokens / 16; ++b)
    ActivationBatch::lay_tile_rows(p.q.data(), p.stride, p.stride, kTokens, b, cols, rows.data() + b * block_bytes);
  int64_t sink_sum = 0;
  for (auto _ : state)
    i2s_amx_gemm(p.tiles, 0, (p.n + 15) / 16, rows.data(), kTokens,
                 [&](int64_t, int64_t, int, const int32_t* dots) { sink_sum += dots[0]; });
  benchmark::DoNotOptimize(sink_sum);
  report(state, p);
}

// The scalar reference matmul (I2_S bytes, one thread) on float inputs.
void BM_I2sPrefillReference(benchmark::State& state) {
  const int64_t n = state.range(0), k = state.range(1);
  Rng rng(1);
  const std::vector<uint8_t> bytes = tools::random_i2s(n, k, rng);
  ThreadPool pool(1);
  const auto m = make_reference_matmul({"bench", GgmlType::I2_S, n, k, bytes.data()});
  std::vector<float> x(static_cast<size_t>(kTokens * k)), y(static_cast<size_t>(kTokens * n));
  for (auto& v : x) v = static_cast<float>(rng.below(1000)) / 500.0f - 1.0f;
  ActivationBatch in(kTokens, k);
  for (auto _ : state) {
    in.set(x.data(), kTokens, k);
    m->forward(in, y.data(), pool);
  }
  state.counters["MAC/s"] =
      benchmark::Counter(static_cast<double>(n * k * kTokens), benchmark::Counter::kIsIterationInvariantRate);
}

const auto kShapes = [](benchmark::internal::Benchmark* b) {
  b->Args({2560, 2560})->Args({640, 2560})->Args({6912, 2560})->Args({2560, 6912})->Unit(benchmark::kMillisecond)->UseRealTime();
};
BENCHMARK(BM_I2sPrefillLookup)->Apply(kShapes);
BENCHMARK(BM_I2sPrefillTileDots)->Apply(kShapes);
BENCHMARK(BM_I2sPrefillTileDotsAvx512Vnni)->Apply(kShapes);
BENCHMARK(BM_I2sPrefillAmx)->Apply(kShapes);
BENCHMARK(BM_I2sPrefillReference)->Args({2560, 2560})->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace lowbit
