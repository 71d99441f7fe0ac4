#include "kernels/compute_throughput.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timer.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace lowbit {

namespace {

// Eight dependent adds per iteration: the loop takes 8 cycles whatever the
// core's width, so iterations * 8 / seconds is the clock. Register + register:
// Intel's cores since Golden Cove fold an add of an immediate at rename, and a
// chain of those ran 8.5 times as fast as the clock on a Xeon ("22 GHz").
double seconds_of_add_chain(uint64_t iterations) {
  uint64_t v = 0;
  const uint64_t one = 1;
  const double t0 = now_seconds();
#if defined(__x86_64__)
  for (uint64_t i = 0; i < iterations; ++i)
    __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                     "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                     : "+r"(v)
                     : "r"(one));
#elif defined(__aarch64__)
  for (uint64_t i = 0; i < iterations; ++i)
    __asm__ volatile("add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\t"
                     "add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1"
                     : "+r"(v)
                     : "r"(one));
#else
#error "measure_cpu_clock needs a dependent-add chain for this architecture"
#endif
  return now_seconds() - t0;
}

}  // namespace

CpuClock measure_cpu_clock() {
  CpuClock c{0, 0};
  const uint64_t iterations = 20'000'000;
  seconds_of_add_chain(iterations / 4);  // let the clock ramp up
  double best = 1e30;
  for (int r = 0; r < 3; ++r) best = std::min(best, seconds_of_add_chain(iterations));
  c.core_hz = static_cast<double>(iterations) * 8 / best;
#if defined(__x86_64__)
  const double t0 = now_seconds();
  const uint64_t r0 = __rdtsc();
  while (now_seconds() - t0 < 0.05) {
  }
  c.tsc_hz = static_cast<double>(__rdtsc() - r0) / (now_seconds() - t0);
#endif
  return c;
}

ComputeThroughput measure_compute_throughput(const Matmul& m, double core_hz, bool* pairs) {
  const int64_t units = m.work_units();
  if (units < 2 || units % 2 != 0)
    fail("compute throughput: ", m.kernel_name(), "'s matrix has ", units, " row blocks; it needs an even number");
  const bool paired = m.pairs_with(m, 1);
  if (pairs != nullptr) *pairs = paired;
  ThreadPool inline_pool(1);
  std::vector<float> x(static_cast<size_t>(m.cols()));
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>(k * 37 % 255) - 127);
  ActivationBatch in(1, m.cols());
  in.set(x.data(), 1, m.cols());
  m.prepare_units(in, inline_pool);  // quantized once: C is the weights' part alone
  std::vector<float> y(static_cast<size_t>(m.rows()));
  const int64_t half = units / 2;
  const auto pass = [&] {
    if (paired)
      for (int64_t u = 0; u < half; ++u) m.forward_pair(m, in, y.data(), y.data(), u, u + half);
    else
      m.forward_units(in, y.data(), 0, units);
  };
  const int calls = 2000;
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    const double t0 = now_seconds();
    for (int i = 0; i < calls; ++i) pass();
    best = std::min(best, (now_seconds() - t0) / calls);
  }
  const double vectors = static_cast<double>(m.rows()) * static_cast<double>(m.cols()) / 32;
  return {best * core_hz / vectors, static_cast<double>(m.weight_bytes()) / vectors};
}

}  // namespace lowbit
