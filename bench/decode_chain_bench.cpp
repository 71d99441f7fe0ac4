// The I2_S matrices of a BitNet 2B-4T decode step (30 layers x q, k, v, o,
// gate, up, down; 0.52 GB), each GEMV cold from DRAM as in decode, for the
// kernels that run them, next to a plain read of same-sized buffers split the
// same way, and i2s once more with q, k, v and gate, up sharing a region
// (forward_together, as the decoder runs them). The variants take turns pass
// by pass in one process, so they run under the same host conditions (this
// shared host's bandwidth moves by 20-30% between minutes). Each kernel and the
// read have their own copy of the weights, and on this VM copies can differ in
// speed (docs/performance.md), so compare kernels over several processes;
// i2s and i2s together run the same matrices. Counters: GB/s of weights per
// variant (median pass), each kernel as a share of the plain read, and i2s
// together as a share of i2s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <span>
#include <memory>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/cpu_features.h"
#include "core/rng.h"
#include "core/stats.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "kernels/dispatch.h"
#include "kernels/read_bandwidth.h"
#include "tools/bench_weights.h"

namespace lowbit {
namespace {

struct Shape {
  int64_t n, k;
};
constexpr int kLayers = 30;
constexpr Shape kLayerShapes[] = {{2560, 2560}, {640, 2560}, {640, 2560}, {2560, 2560},
                                  {6912, 2560}, {6912, 2560}, {2560, 6912}};

// Reads every byte once, in chunks of 40 KiB taken from the pool (the GEMVs
// take 4 tiles, 40 KiB at K = 2560).
uint64_t read_region(const uint8_t* p, int64_t bytes, ThreadPool& pool) {
  constexpr int64_t kChunk = 40 << 10;
  std::vector<uint64_t> sums(static_cast<size_t>(pool.size()), 0);
  pool.parallel_for((bytes + kChunk - 1) / kChunk, 1, [&](int64_t b, int64_t e, int t) {
    const int64_t end = std::min(e * kChunk, bytes);
    sums[static_cast<size_t>(t)] ^= read_every_byte(p + b * kChunk, static_cast<size_t>(end - b * kChunk));
  });
  uint64_t s = 0;
  for (uint64_t v : sums) s ^= v;
  return s;
}

void BM_DecodeChainI2sMatrices(benchmark::State& state) {
  if (!cpu_features().has_avx2_level()) return state.SkipWithError("needs AVX2");
  const int threads = static_cast<int>(state.range(0));
  std::vector<std::string> kernels = {"i2s", "int2"};
  if (cpu_features().has_avx512_level() && cpu_features().avx512vbmi) kernels.push_back("tl2v");
  ThreadPool pool(threads);
  Rng rng(1);
  std::vector<std::vector<std::unique_ptr<Matmul>>> mats(kernels.size());
  std::vector<double> kernel_bytes(kernels.size(), 0.0);  // weights read per pass, in each kernel's layout
  std::vector<AlignedBuffer<uint8_t>> plain;
  double bytes_per_pass = 0;
  {
    HugePageScope huge_pages;
    for (int l = 0; l < kLayers; ++l)
      for (const Shape& s : kLayerShapes) {
        const std::vector<uint8_t> i2s = tools::random_i2s(s.n, s.k, rng);
        for (size_t i = 0; i < kernels.size(); ++i) {
          mats[i].push_back(make_matmul({"chain", GgmlType::I2_S, s.n, s.k, i2s.data()}, kernels[i], pool));
          kernel_bytes[i] += static_cast<double>(mats[i].back()->weight_bytes());
        }
        plain.emplace_back(static_cast<size_t>(s.n * s.k / 4));
        for (size_t i = 0; i < plain.back().size(); i += 64) plain.back()[i] = static_cast<uint8_t>(i);
        bytes_per_pass += static_cast<double>(s.n * s.k) / 4;
      }
  }
  std::vector<float> x(6912), y(6912 * 3);  // room for three outputs side by side
  for (auto& v : x) v = static_cast<float>(rng.below(1000)) / 500.0f - 1.0f;
  ActivationBatch in(1, 6912);
  // One layer as the decoder runs it: the input set (and quantized) once for
  // q, k, v, once each for o, for gate and up, and for down; q, k, v and gate,
  // up in one region each when `together`, else one forward per matrix.
  const auto run_layer = [&](const std::unique_ptr<Matmul>* m, bool together) {
    const auto group = [&](std::initializer_list<int> idx, int64_t k) {
      const Matmul* ms[3];
      float* ys[3];
      size_t n = 0;
      for (int j : idx) ms[n] = m[j].get(), ys[n] = y.data() + 6912 * n, ++n;
      in.set(x.data(), 1, k);
      if (together) return forward_together(std::span(ms, n), in, std::span(ys, n), pool);
      for (size_t j = 0; j < n; ++j) ms[j]->forward(in, ys[j], pool);
    };
    group({0, 1, 2}, 2560);
    group({3}, 2560);
    group({4, 5}, 2560);
    group({6}, 6912);
  };
  std::vector<std::vector<double>> gbps(kernels.size() + 2);  // [plain read, kernels..., i2s together]
  uint64_t sink = 0;
  for (auto _ : state) {
    double t0 = now_seconds();
    for (const auto& b : plain) sink ^= read_region(b.data(), static_cast<int64_t>(b.size()), pool);
    gbps[0].push_back(bytes_per_pass / (now_seconds() - t0) / 1e9);
    for (size_t i = 0; i < kernels.size(); ++i) {
      t0 = now_seconds();
      for (size_t l = 0; l < mats[i].size(); l += std::size(kLayerShapes)) run_layer(&mats[i][l], false);
      gbps[i + 1].push_back(kernel_bytes[i] / (now_seconds() - t0) / 1e9);
    }
    t0 = now_seconds();
    for (size_t l = 0; l < mats[0].size(); l += std::size(kLayerShapes)) run_layer(&mats[0][l], true);
    gbps.back().push_back(kernel_bytes[0] / (now_seconds() - t0) / 1e9);
  }
  benchmark::DoNotOptimize(sink);
  const double read = median(gbps[0]);
  state.counters["read_GBps"] = read;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const double g = median(gbps[i + 1]);
    state.counters[kernels[i] + "_GBps"] = g;
    state.counters[kernels[i] + "_of_read"] = g / read;
    // Time per pass against i2s's, pass by pass (layouts differ in bytes).
    if (i > 0) {
      std::vector<double> speed;
      for (size_t p = 0; p < gbps[1].size(); ++p)
        speed.push_back((gbps[i + 1][p] / kernel_bytes[i]) / (gbps[1][p] / kernel_bytes[0]));
      state.counters[kernels[i] + "_speed_of_i2s"] = median(speed);
    }
  }
  state.counters["i2s_together_of_i2s"] = median(gbps.back()) / median(gbps[1]);
}
BENCHMARK(BM_DecodeChainI2sMatrices)->Arg(1)->Arg(2)->Iterations(30)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace lowbit
