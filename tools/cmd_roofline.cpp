// `lowbit roofline`: the AI-PC paper's performance model on this machine.
// Per core, a GEMV reads at most min(BW_core, B / C) bytes per cycle: BW_core
// the read bandwidth a core gets while all p cores read, B the bytes of a
// 256-bit output vector's weights, C the cycles its up-convert-and-compute
// sequence takes (measured with L1-resident weights). The tool prints that
// bound per kernel and core count next to the GEMV bandwidth measured on the
// BitNet 2B-4T shapes, and the cost of an empty parallel region of the pool.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "command.h"
#include "kernels/aipc_families.h"
#include "core/aligned_buffer.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "gemv_timing.h"
#include "kernels/compute_throughput.h"
#include "kernels/dispatch.h"
#include "kernels/read_bandwidth.h"
#include "model/model_shapes.h"

namespace lowbit::tools {
namespace {

struct Options {
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
    {"q8_0", GgmlType::Q8_0, Vnni4Bits::Eight}, {"int2", GgmlType::Q2_0, Vnni4Bits::Two}, {"int1", GgmlType::Q1_0, Vnni4Bits::One}};

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

// Random codes with d = 2^-7 in every block (the blocks of Q8_0, Q2_0, Q1_0 start with fp16 d).
std::vector<uint8_t> random_blocks(GgmlType type, int64_t rows, int64_t cols, uint64_t seed) {
  std::vector<uint8_t> data(static_cast<size_t>(ggml_tensor_bytes(type, rows * cols, cols)));
  Rng rng(seed);
  for (size_t i = 0; i + 8 <= data.size(); i += 8) {
    const uint64_t v = rng.next_u64();
    std::memcpy(&data[i], &v, 8);
  }
  const uint16_t d = 0x2000;
  for (size_t off = 0; off < data.size(); off += static_cast<size_t>(ggml_type_info(type).block_bytes))
    std::memcpy(&data[off], &d, 2);
  return data;
}

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
  std::nth_element(batches.begin(), batches.begin() + batches.size() / 2, batches.end());
  return batches[batches.size() / 2];
}

int run_roofline(const Options& o) {
  if (o.threads < 1) fail("-t: thread count ", o.threads, " is not positive");
  const CpuFeatures& cpu = cpu_features();
  const Vnni4Isa isa = vnni4_isa(cpu);
  if (isa == Vnni4Isa::None) fail("roofline: the up-convert-and-compute kernels need AVX2 (cpu: ", cpu.describe(), ")");
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M", std::localtime(&now));
  std::printf("machine: %s, %u hardware threads; features: %s\ndate: %s\n", cpu_model_name().c_str(),
              std::thread::hardware_concurrency(), cpu.describe().c_str(), date);

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

  std::printf("\ncompute, 1 core, L1-resident weights (C: cycles per 256-bit output vector = 8 rows x 4 k):\n");
  std::printf("| kernel | B bytes/vector | C cycles/vector | B/C bytes/cycle | GB/s per core |\n|---|---:|---:|---:|---:|\n");
  std::map<std::string, ComputeThroughput> compute;
  for (const Family& f : kFamilies) {
    // The kernel a model would run: for int2, the one for Q2_0's levels.
    std::string name = cat(f.name, "/", vnni4_isa_name(isa));
    const Vnni4Kernel kernel =
        f.bits == Vnni4Bits::Two ? int2_kernel(isa, {-1, 0, 1, 2}, 64, cpu.vendor_amd, &name)
                                 : vnni4_kernel(f.bits, isa, cpu.vendor_amd);
    if (kernel == nullptr) continue;
    const ComputeThroughput c = measure_compute_throughput(f.bits, kernel, clock.core_hz);
    compute[f.name] = c;
    std::printf("| %s | %.2f | %.3f | %.2f | %.1f |\n", name.c_str(), c.bytes_per_vector,
                c.cycles_per_vector, c.bytes_per_vector / c.cycles_per_vector,
                c.bytes_per_vector / c.cycles_per_vector * clock.core_hz / 1e9);
  }

  const auto shapes = matrix_shapes(find_model_shape(o.model));
  std::printf("\nroofline bound min(bandwidth, p x f x B/C) vs measured GEMV (%s shapes, weights out of cache, "
              "median; %s):\n| kernel | cores | bandwidth GB/s | compute GB/s | bound GB/s | limited by |",
              o.model.c_str(),
              o.chain ? "copies back to back, as a decode step runs its matrices" : "single calls after an eviction");
  for (const auto& [n, k] : shapes) std::printf(" %lldx%lld GB/s (%% of bound) |", static_cast<long long>(n),
                                                static_cast<long long>(k));
  std::printf("\n|---|---:|---:|---:|---:|---|");
  for (size_t i = 0; i < shapes.size(); ++i) std::printf("---:|");
  std::printf("\n");
  std::map<std::pair<std::string, int>, std::vector<double>> measured;
  for (const Family& f : kFamilies) {
    if (compute.count(f.name) == 0) continue;
    const ComputeThroughput& c = compute[f.name];
    // Shape by shape (with --chain, its copies take 2x the last-level cache), every core count.
    std::string kernel_name;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const auto data = random_blocks(f.type, shapes[i].first, shapes[i].second, 100 + i);
      const WeightView w{"roofline", f.type, shapes[i].first, shapes[i].second, data.data()};
      const auto make = [&] { return find_kernel_family(f.name)->make(w, cpu, *pools[o.threads]); };
      auto mats = make_copies(1, make);  // huge pages, as Model::load places its matrices
      if (o.chain)
        for (auto& m : make_copies(chain_copies(mats.front()->weight_bytes()) - 1, make)) mats.push_back(std::move(m));
      kernel_name = mats.front()->kernel_name();
      Rng rng(3);
      std::vector<float> x(static_cast<size_t>(shapes[i].second));
      for (auto& v : x) v = static_cast<float>(rng.normal());
      ActivationBatch in(1, shapes[i].second);
      in.set(x.data(), 1, shapes[i].second);
      for (int p = 1; p <= o.threads; ++p) {
        const double s = o.chain ? seconds_per_matmul_chain(mats, in, *pools[p], o.calls)
                                 : seconds_per_matmul(*mats.front(), in, *pools[p], 0.0, o.calls);
        measured[{f.name, p}].push_back(static_cast<double>(mats.front()->weight_bytes()) / s / 1e9);
      }
    }
    for (int p = 1; p <= o.threads; ++p) {
      const double compute_gbps = p * clock.core_hz * c.bytes_per_vector / c.cycles_per_vector / 1e9;
      const double bound = std::min(bandwidth[p], compute_gbps);
      std::printf("| %s | %d | %.1f | %.1f | %.1f | %s |", kernel_name.c_str(), p, bandwidth[p], compute_gbps, bound,
                  bandwidth[p] <= compute_gbps ? "memory" : "compute");
      for (const double gbps : measured[{f.name, p}]) std::printf(" %.1f (%.0f%%) |", gbps, 100 * gbps / bound);
      std::printf("\n");
    }
    std::fflush(stdout);
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
  auto o = std::make_shared<Options>();
  app.add_option("-t,--threads", o->threads, "largest core count to model and measure (1..t)");
  app.add_option("--shapes", o->model, "model whose matrix shapes to time (bitnet-2b4t, llama3-8b-1.58, ...)");
  app.add_option("-r,--calls", o->calls, "timed calls per GEMV (the median is reported); with --chain, passes");
  app.add_flag("--chain", o->chain,
               "time copies of each matrix back to back, as a decode step runs its matrices, instead of single calls "
               "after a cache eviction");
  return [o] { return run_roofline(*o); };
}

const CommandRegistration reg{"roofline", "the AI-PC roofline: bandwidth, up-convert-and-compute cycles, GEMV bound",
                              setup_roofline};

}  // namespace
}  // namespace lowbit::tools
