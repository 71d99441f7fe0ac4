// The compute side of the AI-PC paper's roofline: how fast a core runs the
// up-convert-and-compute sequence when memory is no limit (weights in L1), as
// C = cycles per 256-bit output vector (8 rows x 4 k of int32), and the clock
// that turns seconds into cycles. `lowbit roofline` combines these with the
// measured read bandwidth: per core, min(bandwidth, B / C) bytes per cycle.
#pragma once

#include "kernels/matmul.h"

namespace lowbit {

struct CpuClock {
  double core_hz;  // from a chain of dependent adds (one per cycle): the clock kernels run at
  double tsc_hz;   // rdtsc ticks over a timed interval (the invariant TSC; not the core clock under boost)
};
CpuClock measure_cpu_clock();

struct ComputeThroughput {
  double cycles_per_vector;  // C
  double bytes_per_vector;   // B: layout bytes read per output vector, scales included
};

// Single-threaded, on the calling thread: one token through `m` (a small
// matrix whose weights stay in L1, two row blocks or more) as decode's GEMV
// runs it: units side by side (Matmul::forward_pair) where m pairs with
// itself, as forward_together reads a region's halves, else forward_units over
// every unit (never its distant streams, which q8_0 takes on AMD for parts over
// 1 MiB apart: a matrix this small has none). Best of several timed runs.
// `pairs` says which path was timed.
ComputeThroughput measure_compute_throughput(const Matmul& m, double core_hz, bool* pairs = nullptr);

}  // namespace lowbit
