// The machine's memory read bandwidth, measured the way a GEMV reads weights:
// one pass over a buffer far larger than the caches, every byte loaded once,
// split across the pool's threads, each reading its share as four quarters
// side by side (the fastest way found to draw memory on one core; the GEMVs
// that read several distant rows at once reach it). Benchmarks report kernels
// against it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/thread_pool.h"

namespace lowbit {

// A buffer of `bytes` (every page touched) that one pass reads whole: GB/s
// (1e9 bytes per second) of `threads` threads of the pool (threads <=
// pool.size()), each reading a contiguous share. A tool that alternates
// passes of it with GEMV passes compares the two under the same host
// conditions (docs/performance.md: this VM's bandwidth moves minute by minute).
class ReadProbe {
 public:
  explicit ReadProbe(size_t bytes);
  ~ReadProbe();
  ReadProbe(const ReadProbe&) = delete;
  ReadProbe& operator=(const ReadProbe&) = delete;
  double pass_gbps(ThreadPool& pool, int threads) const;

 private:
  uint8_t* data_;
  size_t bytes_;
};

// Best of `repeats` ReadProbe passes over `bytes` bytes.
double measure_read_bandwidth_gbps(ThreadPool& pool, int threads, size_t bytes = size_t{1} << 30, int repeats = 5);

// Loads every byte of p[0, bytes) once with the widest loads the CPU has (on
// AVX2 / AVX-512 four quarters side by side; a multiple of 128 bytes is read);
// returns a value that depends on all of them.
uint64_t read_every_byte(const uint8_t* p, size_t bytes);
// Its ISA paths (x86_avx2/, x86_avx512/; call only where the CPU has them).
uint64_t read_sum_avx2(const uint8_t* p, size_t bytes);
uint64_t read_sum_avx512(const uint8_t* p, size_t bytes);

}  // namespace lowbit
