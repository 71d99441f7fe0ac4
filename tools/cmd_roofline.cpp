// `lowbit roofline`: the AI-PC paper's performance model on this machine.
// Per core, a GEMV reads at most min(BW_core, B / C) bytes per cycle: BW_core
// the read bandwidth a core gets while all p cores read, B the bytes of a
// 256-bit output vector's weights, C the cycles its up-convert-and-compute
// sequence takes (measured with L1-resident weights). The tool prints that
// bound per kernel and core count next to the GEMV bandwidth measured on the
// BitNet 2B-4T shapes, and the cost of an empty parallel region of the pool.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "bench_weights.h"
#include "command.h"
#include "core/aligned_buffer.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "gemv_timing.h"
#include "kernels/compute_throughput.h"
#include "kernels/dispatch.h"
#include "kernels/read_bandwidth.h"
#include "kernels/vnni4_matmul.h"
#include "model/model_shapes.h"

namespace lowbit::tools {
namespace {

struct RooflineOptions {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string model = "bitnet-2b4t";
  int calls = 40;  // timed GEMVs per matrix and core count (each after a cache eviction)
  bool chain = false;  // time copies back to back (gemv_timing.h); calls = passes
};

struct Family {
  const char* name;
  GgmlType type;
  Vnni4Bits bits;
};
constexpr Family kFamilies[] = {
    {"q8_0", GgmlType::Q8_0, Vnni4Bits::Eight},
    {"int2", GgmlType::Q2_0, Vnni4Bits::Two},
    {"int1", GgmlType::Q1_0, Vnni4Bits::One},
    {"int1_lut", GgmlType::Q1_0, Vnni4Bits::OneLookup}};  // plain AVX2 code at every level



// Median microseconds of an empty region: run_on_all, or parallel_for over 4 chunks per thread.
double empty_region_us(ThreadPool& pool, bool ranged) {
  std::vector<double> batches;
  const int calls = 2000;
  for (int b = 0; b < 15; ++b) {
    const double t0 = now_seconds();
    for (int i = 0; i < calls; ++i) {
      if (ranged)
        pool.parallel_for(4 * pool.size(), 1, [](int64_t, int64_t, int) {});
      else
        pool.run_on_all([](int, int) {});
    }
    batches.push_back((now_seconds() - t0) / calls * 1e6);
  }
  return median(std::move(batches));
}

int run_roofline(const RooflineOptions& o) {
  if (o.threads < 1) fail("-t: thread count ", o.threads, " is not positive");
  const CpuFeatures& cpu = cpu_features();
  const Vnni4Isa isa = vnni4_isa(cpu);
  if (isa == Vnni4Isa::None) fail("roofline: the up-convert-and-compute kernels need AVX2 (cpu: ", cpu.describe(), ")");
  print_machine_and_date();

  const CpuClock clock = measure_cpu_clock();
  std::printf("clock: core %.2f GHz (chain of dependent adds), TSC %.2f GHz (rdtsc over 50 ms); cycles below are "
              "core cycles\n",
              clock.core_hz / 1e9, clock.tsc_hz / 1e9);

  std::map<int, std::unique_ptr<ThreadPool>> pools;
  std::map<int, double> bandwidth;
  for (int p = 1; p <= o.threads; ++p) {
    pools[p] = std::make_unique<ThreadPool>(p);
    bandwidth[p] = measure_read_bandwidth_gbps(*pools[p], p);
  }
  for (int p = 2; p <= o.threads; ++p)
    std::printf("thread pool, %d threads: empty run_on_all %.2f us, empty parallel_for (%d chunks) %.2f us (median)\n",
                p, empty_region_us(*pools[p], false), 4 * p, empty_region_us(*pools[p], true));
  for (int p = 1; p <= o.threads; ++p)
    std::printf("read bandwidth, %d core%s: %.1f GB/s = %.2f bytes/cycle per core\n", p, p > 1 ? "s" : "",
                bandwidth[p], bandwidth[p] * 1e9 / p / clock.core_hz);

  // C of each family's one-token path on two L1-resident row blocks (~8 KiB
  // of codes each). Measured before every shape and once after the last, the
  // least kept: on a shared host a core's arithmetic slows for stretches (a
  // busy sibling thread; session 38 saw q8_0's C 0.80 -> 1.34 cycles) while
  // the clock does not, and the bound is what the core can do.
  struct L1Matrix {
    std::unique_ptr<Matmul> m;
    bool pairs = false;
  };
  std::map<std::string, L1Matrix> l1;
  ThreadPool& one_core = *pools[1];
  for (const Family& f : kFamilies) {
    const int64_t rows = 2 * kVnni4Rows, cols = f.bits == Vnni4Bits::Eight ? 512 : f.bits == Vnni4Bits::Two ? 2048 : 4096;
    const auto data = random_blocks(f.type, rows, cols, 7);
    const WeightView w{"roofline-l1", f.type, rows, cols, data.data()};
    const KernelFamily* family = find_kernel_family(f.name);
    if (family == nullptr || family->score(w, cpu) == 0) continue;
    l1[f.name] = {family->make(w, cpu, one_core)};  // owns its layout: data may go
  }
  std::map<std::string, ComputeThroughput> compute;
  int compute_runs = 0;
  const auto measure_compute = [&] {
    for (auto& [name, x] : l1) {
      const ComputeThroughput c = measure_compute_throughput(*x.m, clock.core_hz, &x.pairs);
      if (compute.count(name) == 0 || c.cycles_per_vector < compute[name].cycles_per_vector) compute[name] = c;
    }
    ++compute_runs;
  };
  measure_compute();

  // Shape by shape (with --chain, the families' copies and the read together
  // take 2x the last-level cache), the families side by side: with --chain their passes and a plain
  // read of as many bytes take turns, so every ratio below compares runs made
  // under the same host conditions (this VM's bandwidth moves minute by minute).
  const auto shapes = matrix_shapes(find_model_shape(o.model));
  std::map<std::pair<std::string, int>, std::vector<double>> measured;  // (family, cores) -> GB/s per shape
  std::map<int, std::vector<double>> read_alongside;                     // cores -> GB/s per shape (--chain)
  std::map<std::string, std::string> kernel_names;
  std::vector<const Family*> families;
  for (const Family& f : kFamilies)
    if (compute.count(f.name) != 0) families.push_back(&f);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [n, k] = shapes[i];
    std::fprintf(stderr, "timing %lldx%lld ...\n", static_cast<long long>(n), static_cast<long long>(k));
    if (i > 0) measure_compute();
    std::vector<std::vector<std::unique_ptr<Matmul>>> mats;
    for (const Family* f : families) {
      const auto data = random_blocks(f->type, n, k, 100 + i);
      const WeightView w{"roofline", f->type, n, k, data.data()};
      const auto make = [&] { return find_kernel_family(f->name)->make(w, cpu, *pools[o.threads]); };
      mats.push_back(make_copies(1, make));  // huge pages, as Model::load places its matrices
      if (o.chain)
        for (auto& m : make_copies(chain_copies(mats.back().front()->weight_bytes(), static_cast<int>(families.size()) + 1) - 1, make))
          mats.back().push_back(std::move(m));
      kernel_names[f->name] = mats.back().front()->kernel_name();
    }
    Rng rng(3);
    std::vector<float> x(static_cast<size_t>(k));
    for (auto& v : x) v = static_cast<float>(rng.normal());
    ActivationBatch in(1, k);
    in.set(x.data(), 1, k);
    const auto gbps = [&](size_t j, double seconds) {
      return static_cast<double>(mats[j].front()->weight_bytes()) / seconds / 1e9;
    };
    std::vector<const ChainsInTurn::Chain*> chains;
    for (const auto& m : mats) chains.push_back(&m);
    const std::unique_ptr<ChainsInTurn> turns = o.chain ? std::make_unique<ChainsInTurn>(chains) : nullptr;
    for (int p = 1; p <= o.threads; ++p) {
      ThreadPool& pool = *pools[p];
      if (!o.chain) {
        for (size_t j = 0; j < families.size(); ++j)
          measured[{families[j]->name, p}].push_back(gbps(j, seconds_per_matmul(*mats[j].front(), in, pool, 0.0, o.calls)));
        continue;
      }
      const ChainsInTurn::Times times = turns->time(in, pool, p, o.calls);
      read_alongside[p].push_back(times.read_gbps);
      for (size_t j = 0; j < families.size(); ++j) measured[{families[j]->name, p}].push_back(gbps(j, times.seconds[j]));
    }
  }

  measure_compute();
  std::printf("\ncompute, 1 core, L1-resident weights (C: cycles per 256-bit output vector = 8 rows x 4 k, the least of %d "
              "measurements spread over the run; the one-token path decode runs, two row blocks side by side where the "
              "kernel pairs them):\n",
              compute_runs);
  std::printf("| kernel | path | B bytes/vector | C cycles/vector | B/C bytes/cycle | GB/s per core |\n"
              "|---|---|---:|---:|---:|---:|\n");
  for (const Family& f : kFamilies) {
    if (l1.count(f.name) == 0) continue;
    const L1Matrix& x = l1[f.name];
    const ComputeThroughput& c = compute[f.name];
    std::printf("| %s | %s | %.2f | %.3f | %.2f | %.1f |\n", x.m->kernel_name().c_str(),
                x.pairs ? "pairs" : "one block at a time", c.bytes_per_vector, c.cycles_per_vector,
                c.bytes_per_vector / c.cycles_per_vector, c.bytes_per_vector / c.cycles_per_vector * clock.core_hz / 1e9);
  }

  std::printf("\nroofline bound min(bandwidth, p x f x B/C) vs measured GEMV (%s shapes, weights out of cache, median; %s):\n",
              o.model.c_str(),
              o.chain ? "copies back to back, as a decode step runs its matrices, passes taking turns with a plain read "
                        "of as many bytes; each shape's % is of the bound with that read as the bandwidth"
                      : "single calls after an eviction");
  std::printf("| kernel | cores | bandwidth GB/s | compute GB/s | bound GB/s | limited by |");
  for (const auto& [n, k] : shapes)
    std::printf(" %lldx%lld GB/s (%% of bound) |", static_cast<long long>(n), static_cast<long long>(k));
  std::printf("\n|---|---:|---:|---:|---:|---|");
  for (size_t i = 0; i < shapes.size(); ++i) std::printf("---:|");
  std::printf("\n");
  // --chain: the bandwidth column is the median over shapes of the read taken alongside.
  const auto bandwidth_of = [&](int p) { return o.chain ? median(read_alongside[p]) : bandwidth[p]; };
  if (o.chain)
    for (int p = 1; p <= o.threads; ++p) {
      std::printf("| plain read, alongside | %d | %.1f | | | |", p, bandwidth_of(p));
      for (const double r : read_alongside[p]) std::printf(" %.1f |", r);
      std::printf("\n");
    }
  for (const Family* f : families) {
    const ComputeThroughput& c = compute[f->name];
    for (int p = 1; p <= o.threads; ++p) {
      const double compute_gbps = p * clock.core_hz * c.bytes_per_vector / c.cycles_per_vector / 1e9;
      const double bw = bandwidth_of(p);
      std::printf("| %s | %d | %.1f | %.1f | %.1f | %s |", kernel_names[f->name].c_str(), p, bw, compute_gbps,
                  std::min(bw, compute_gbps), bw <= compute_gbps ? "memory" : "compute");
      const auto& row = measured[{f->name, p}];
      for (size_t i = 0; i < row.size(); ++i) {
        const double bound = std::min(o.chain ? read_alongside[p][i] : bw, compute_gbps);
        std::printf(" %.1f (%.0f%%) |", row[i], 100 * row[i] / bound);
      }
      std::printf("\n");
    }
  }
  if (measured.count({"int2", o.threads}) && measured.count({"q8_0", o.threads})) {
    std::printf("\nint2 GB/s as %% of q8_0 GB/s at %d threads:", o.threads);
    for (size_t i = 0; i < shapes.size(); ++i)
      std::printf(" %lldx%lld %.0f%%", static_cast<long long>(shapes[i].first),
                  static_cast<long long>(shapes[i].second),
                  100 * measured[{"int2", o.threads}][i] / measured[{"q8_0", o.threads}][i]);
    std::printf("\n");
  }
  return 0;
}

CommandMain setup_roofline(CLI::App& app) {
  auto o = std::make_shared<RooflineOptions>();
  app.add_option("-t,--threads", o->threads, "largest core count to model and measure (1..t)");
  app.add_option("--shapes", o->model, "model whose matrix shapes to time (bitnet-2b4t, llama3-8b-1.58, ...)");
  app.add_option("-r,--calls", o->calls, "timed calls per GEMV (the median is reported); with --chain, passes");
  app.add_flag("--chain", o->chain,
               "time copies of each matrix back to back, as a decode step runs its matrices, instead of single calls "
               "after a cache eviction");
  return [o] { return run_roofline(*o); };
}

const CommandRegistration roofline_command{"roofline", "the AI-PC roofline: bandwidth, up-convert-and-compute cycles, GEMV bound",
                              setup_roofline};

}  // namespace
}  // namespace lowbit::tools
