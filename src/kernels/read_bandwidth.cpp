#include "kernels/read_bandwidth.h"

#include <algorithm>
#include <cstdint>

#include "core/aligned_buffer.h"
#include "core/cpu_features.h"
#include "core/timer.h"

namespace lowbit {

namespace {

uint64_t read_sum_portable(const uint8_t* p, size_t bytes) {
  const uint64_t* w = reinterpret_cast<const uint64_t*>(p);
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i + 4 <= bytes / 8; i += 4) {
    a ^= w[i];
    b ^= w[i + 1];
    c ^= w[i + 2];
    d ^= w[i + 3];
  }
  return a ^ b ^ c ^ d;
}

}  // namespace

// The ISA paths (read_bandwidth.h) use the widest loads the CPU has, as its
// kernels do; the portable loop stands in elsewhere.
uint64_t read_every_byte(const uint8_t* p, size_t bytes) {
  static const auto read_sum = [] {
#if LOWBIT_X86_KERNELS
    const CpuFeatures& cpu = cpu_features();
    return cpu.has_avx512_level() ? read_sum_avx512 : cpu.has_avx2_level() ? read_sum_avx2 : read_sum_portable;
#else
    return read_sum_portable;
#endif
  }();
  return read_sum(p, bytes);
}

ReadProbe::ReadProbe(size_t bytes)
    : data_(static_cast<uint8_t*>(aligned_alloc_bytes(std::max<size_t>(bytes, 4096)))), bytes_(std::max<size_t>(bytes, 4096)) {
  for (size_t i = 0; i < bytes_; i += 64) data_[i] = static_cast<uint8_t>(i >> 6);  // touch every page
}

ReadProbe::~ReadProbe() { aligned_free_bytes(data_, bytes_); }

double ReadProbe::pass_gbps(ThreadPool& pool, int threads) const {
  threads = std::clamp(threads, 1, pool.size());
  const size_t per_thread = bytes_ / (4096 * static_cast<size_t>(threads)) * 4096;
  static volatile uint64_t sink = 0;
  const double t0 = now_seconds();
  pool.run_on_all([&](int t, int) {
    if (t < threads) sink = sink + read_every_byte(data_ + per_thread * static_cast<size_t>(t), per_thread);
  });
  return static_cast<double>(per_thread * static_cast<size_t>(threads)) / (now_seconds() - t0) / 1e9;
}

double measure_read_bandwidth_gbps(ThreadPool& pool, int threads, size_t bytes, int repeats) {
  const ReadProbe probe(bytes);
  double best = 0;
  for (int r = 0; r < repeats; ++r) best = std::max(best, probe.pass_gbps(pool, threads));
  return best;
}

}  // namespace lowbit
