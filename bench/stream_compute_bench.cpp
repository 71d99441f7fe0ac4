// How much arithmetic a core can do per weight line and still stream at the
// read bandwidth: the loop a GEMV reduces to, with its arithmetic a dial.
// Each thread reads its half of a 512 MiB buffer (huge pages, as Model::load
// places weights) in `streams` parts side by side (half / streams apart, as
// tl2v's pairs and the F16 head's streams read), and does `ops` independent
// vpdpbusd per 64-byte line it loads (12 accumulators: throughput-bound, not
// latency-bound). Each timed pass sits between two plain reads of the same
// buffer (one stream per thread, no arithmetic: ReadProbe's loop), so a pass's
// share of the read is measured under the same host conditions.
//
// Counters: GB/s (median pass), pct_of_read (median of pass / mean of its two
// reads), and hot_GBps_per_core: the same loop over 32 KiB already in L1 on one
// core, what the arithmetic alone allows. The paper's roofline assumes a core
// streams at min(read, hot); the measured share below 100% where hot is not
// far above a core's share of the read is what that assumption misses
// (docs/performance.md "Session 40").
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstdint>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/cpu_features.h"
#include "core/stats.h"
#include "core/thread_pool.h"
#include "core/timer.h"

// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here reads them.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lowbit {
namespace {

constexpr int64_t kBufferBytes = int64_t{512} << 20;

// The lines of `streams` parts of `bytes` each (part j at p + j * bytes),
// line by line side by side; `ops` vpdpbusd per line.
template <int kStreams, int kOps>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) uint64_t stream_with_ops(const uint8_t* p, int64_t bytes) {
  __m512i acc[13];
  for (auto& a : acc) a = _mm512_setzero_si512();
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t i = 0; i < bytes; i += 64) {
    #pragma GCC unroll 2
    for (int j = 0; j < kStreams; ++j) {
      const __m512i line = _mm512_load_si512(p + j * bytes + i);
      acc[0] = _mm512_xor_si512(acc[0], line);
      #pragma GCC unroll 16
      for (int c = 0; c < kOps; ++c) acc[1 + c % 12] = _mm512_dpbusd_epi32(acc[1 + c % 12], line, ones);
    }
  }
  for (int k = 1; k < 13; ++k) acc[0] = _mm512_add_epi32(acc[0], acc[k]);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(_mm512_castsi512_si128(acc[0])));
}

using StreamFn = uint64_t (*)(const uint8_t*, int64_t);

template <int kStreams>
StreamFn pick_ops(int ops) {
  switch (ops) {
    case 0: return stream_with_ops<kStreams, 0>;
    case 2: return stream_with_ops<kStreams, 2>;
    case 4: return stream_with_ops<kStreams, 4>;
    case 8: return stream_with_ops<kStreams, 8>;
    case 12: return stream_with_ops<kStreams, 12>;
    case 16: return stream_with_ops<kStreams, 16>;
    default: return nullptr;
  }
}

const uint8_t* shared_buffer() {
  static const uint8_t* buffer = [] {
    HugePageScope huge_pages;
    auto* p = static_cast<uint8_t*>(aligned_alloc_bytes(kBufferBytes));  // kept for the process
    for (int64_t i = 0; i < kBufferBytes; i += 64) p[i] = static_cast<uint8_t>(i >> 6);
    return p;
  }();
  return buffer;
}

void BM_StreamWithCompute(benchmark::State& state) {
  const CpuFeatures& cpu = cpu_features();
  if (!cpu.has_avx512_level() || !cpu.avx512vnni) return state.SkipWithError("needs AVX-512 VNNI");
  const int threads = static_cast<int>(state.range(0)), streams = static_cast<int>(state.range(1));
  const int ops = static_cast<int>(state.range(2));
  const StreamFn work = streams == 1 ? pick_ops<1>(ops) : pick_ops<2>(ops);
  const StreamFn plain = pick_ops<1>(0);
  if (work == nullptr) return state.SkipWithError("ops per line: 0, 2, 4, 8, 12 or 16");
  const uint8_t* buffer = shared_buffer();
  ThreadPool pool(threads);
  const int64_t per_thread = kBufferBytes / threads;
  volatile uint64_t sink = 0;
  const auto pass = [&](StreamFn fn, int parts) {
    const double t0 = now_seconds();
    pool.run_on_all([&](int t, int) { sink = sink + fn(buffer + per_thread * t, per_thread / parts); });
    return now_seconds() - t0;
  };

  // The arithmetic alone: 32 KiB in L1, one core.
  const double hot_gbps = [&] {
    constexpr int64_t kHot = 32 << 10;
    constexpr int kRepeats = 20000;
    work(buffer, kHot / streams);  // warm
    const double t0 = now_seconds();
    for (int r = 0; r < kRepeats; ++r) sink = sink + work(buffer, kHot / streams);
    return static_cast<double>(kHot) * kRepeats / (now_seconds() - t0) / 1e9;
  }();

  std::vector<double> gbps, shares;
  pass(plain, 1);  // warm-up: page tables, the pool's threads
  for (auto _ : state) {
    const double before = pass(plain, 1);
    const double seconds = pass(work, streams);
    const double after = pass(plain, 1);
    state.SetIterationTime(seconds);
    gbps.push_back(static_cast<double>(kBufferBytes) / seconds / 1e9);
    shares.push_back(100.0 * 0.5 * (before + after) / seconds);
  }
  state.counters["GBps"] = median(gbps);
  state.counters["pct_of_read"] = median(shares);
  state.counters["hot_GBps_per_core"] = hot_gbps;
}
// threads x streams per thread x vpdpbusd per line.
BENCHMARK(BM_StreamWithCompute)
    ->ArgsProduct({{1, 2}, {1, 2}, {0, 2, 4, 8, 12, 16}})
    ->Iterations(6)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lowbit
