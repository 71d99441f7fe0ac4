#include "gemv_timing.h"

#include <algorithm>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/timer.h"

namespace lowbit::tools {

namespace {

// Larger than any last-level cache a core of a CPU of the 2020s can reach.
constexpr size_t kEvictBytes = size_t{256} << 20;

void evict_caches(ThreadPool& pool) {
  static AlignedBuffer<uint64_t> buffer = [] {
    AlignedBuffer<uint64_t> b(kEvictBytes / 8);
    for (size_t i = 0; i < b.size(); i += 512) b[i] = i;  // touch every page
    return b;
  }();
  static volatile uint64_t sink = 0;
  pool.run_on_all([&](int t, int n) {
    const size_t per = buffer.size() / n;
    uint64_t x = 0;
    for (size_t i = per * t; i < per * (t + 1); ++i) x ^= buffer[i];
    sink = sink + x;
  });
}

}  // namespace

double seconds_per_matmul(const Matmul& m, const ActivationBatch& in, ThreadPool& pool, double min_seconds,
                          int min_calls) {
  std::vector<float> y(static_cast<size_t>(in.tokens() * m.rows()));
  in.quantize(pool);
  m.forward(in, y.data(), pool);  // warm-up: page faults, lazily built state
  std::vector<double> times;
  double total = 0;
  while (total < min_seconds || static_cast<int>(times.size()) < min_calls) {
    evict_caches(pool);
    const double t0 = now_seconds();
    m.forward(in, y.data(), pool);
    times.push_back(now_seconds() - t0);
    total += times.back();
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace lowbit::tools
