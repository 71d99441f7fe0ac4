// The machine's memory read bandwidth, measured the way a GEMV reads weights:
// one pass over a buffer far larger than the caches, every byte loaded once,
// split across the pool's threads. Benchmarks report kernels against it.
#pragma once

#include <cstddef>

#include "core/thread_pool.h"

namespace lowbit {

// GB/s (1e9 bytes per second), best of `repeats` passes over `bytes` bytes
// read by `threads` threads of the pool (threads <= pool.size()).
double measure_read_bandwidth_gbps(ThreadPool& pool, int threads, size_t bytes = size_t{1} << 30, int repeats = 5);

}  // namespace lowbit
