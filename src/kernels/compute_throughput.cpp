#include "kernels/compute_throughput.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/timer.h"
#include "kernels/int1_lut.h"

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

ComputeThroughput measure_compute_throughput(Vnni4Bits bits, Vnni4Kernel kernel, double core_hz) {
  if (kernel == nullptr) fail("no kernel to measure for this layout");
  // ~16 KiB of codes: in L1 (32 KiB on current x86 cores) with the activations.
  const int64_t cols = bits == Vnni4Bits::Eight ? 1024 : bits == Vnni4Bits::Two ? 4096 : 8192;
  const int64_t group = bits == Vnni4Bits::Eight ? 32 : bits == Vnni4Bits::Two ? 64 : 128;
  ThreadPool inline_pool(1);
  const Vnni4Layout layout = pack_vnni4(
      bits, kVnni4Rows, cols, group,
      [&](int64_t r, uint8_t* v, uint16_t* s) {
        for (int64_t k = 0; k < cols; ++k) v[k] = static_cast<uint8_t>((r * 7 + k * 13) & (bits == Vnni4Bits::One || bits == Vnni4Bits::OneLookup ? 1 : 3));
        std::fill(s, s + cols / group, uint16_t{0x3c00});
      },
      inline_pool);
  std::vector<int8_t> x(static_cast<size_t>(cols));
  for (int64_t k = 0; k < cols; ++k) x[k] = static_cast<int8_t>(k * 37);
  std::vector<int32_t> xsum(static_cast<size_t>(cols / group), 0);
  uint8_t lut[32];
  for (int n = 0; n < 16; ++n) lut[n] = static_cast<uint8_t>(n & 3), lut[16 + n] = static_cast<uint8_t>(n >> 2);
  AlignedBuffer<uint8_t> tables(static_cast<size_t>(int1_lut_table_bytes(cols)));  // int1_lut's, built once per token
  if (bits == Vnni4Bits::OneLookup) int1_lut_tables_ref(x.data(), cols, tables.data());
  alignas(64) float out[kVnni4Rows];
  const Vnni4Task task{layout.codes(0), layout.group_bytes(), cols / group, group / layout.k_per_step(), x.data(),
                       xsum.data(), -1, lut, 1.0f, out, tables.data()};
  const int calls = 2000;
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    const double t0 = now_seconds();
    for (int i = 0; i < calls; ++i) kernel(task);
    best = std::min(best, (now_seconds() - t0) / calls);
  }
  const double vectors = static_cast<double>(kVnni4Rows) * static_cast<double>(cols) / 32;
  return {best * core_hz / vectors, static_cast<double>(layout.block_stride()) / vectors};
}

}  // namespace lowbit
