// `lowbit bench-gemv`: every kernel that runs a weight type (ternary I2_S by
// default; --type for the block formats) on the weight matrices of real
// models, one token at a time, against the machine's read bandwidth measured
// in the same run and against the scalar reference. Prints a markdown table
// (docs/performance.md keeps one).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_weights.h"
#include "command.h"
#include "core/aligned_buffer.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/rng.h"
#include "gemv_timing.h"
#include "kernels/dispatch.h"
#include "kernels/read_bandwidth.h"
#include "model/model_shapes.h"

namespace lowbit::tools {
namespace {

const char* const kModels[] = {"bitnet-2b4t", "bitnet-large", "llama3-8b-1.58"};

struct BenchGemvOptions {
  std::string kernels;  // comma list; empty: every family that runs the matrix
  std::string threads = "1,2";
  std::string shapes;   // comma list of model names or NxK; empty: all
  int repeats = 10;     // timed calls per row at least (the reference: 2)
  double min_seconds = 0;  // the repeats decide: every call also pays for an eviction
  bool chain = false;      // time copies back to back (gemv_timing.h) instead of single cold calls
  std::string type = "i2_s";  // the weights' type: i2_s, or a block format whose blocks start with an fp16 scale
};

// The block formats whose blocks start with an fp16 scale: random bytes are
// valid weights once each block's scale is set.
constexpr GgmlType kBlockTypes[] = {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                                    GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::Q2_0, GgmlType::Q1_0, GgmlType::Q2_K, GgmlType::Q3_K,
                                    GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

struct Matrix {
  std::string model;
  int64_t rows, cols;
  std::string shape() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

// "NxK" -> {N, K}; nothing unless the item is two positive integers joined by x.
std::optional<std::pair<int64_t, int64_t>> parse_shape(const std::string& item) {
  const size_t x = item.find('x');
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (x == std::string::npos || !digits(item.substr(0, x)) || !digits(item.substr(x + 1))) return std::nullopt;
  const int64_t n = std::stoll(item.substr(0, x)), k = std::stoll(item.substr(x + 1));
  if (n <= 0 || k <= 0) return std::nullopt;
  return std::make_pair(n, k);
}

// The model matrices the filter names (a model, or one of its NxK shapes);
// an NxK no model has (an output head: 128256x2560) is timed as "custom".
std::vector<Matrix> selected_matrices(const std::string& filter) {
  const auto wanted = split(filter);
  std::vector<Matrix> out;
  std::vector<bool> matched(wanted.size(), false);
  for (const char* model : kModels)
    for (const auto& [n, k] : matrix_shapes(find_model_shape(model))) {
      const Matrix m{model, n, k};
      bool keep = wanted.empty();
      for (size_t i = 0; i < wanted.size(); ++i)
        if (wanted[i] == m.model || wanted[i] == m.shape()) keep = matched[i] = true;
      if (keep) out.push_back(m);
    }
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (matched[i]) continue;
    const auto shape = parse_shape(wanted[i]);
    if (!shape)
      fail("--shapes: '", wanted[i], "' is neither a model (bitnet-2b4t, bitnet-large, llama3-8b-1.58) nor NxK");
    out.push_back(Matrix{"custom", shape->first, shape->second});
  }
  return out;
}

GgmlType bench_type(const std::string& name) {
  const auto same = [&](const char* type_name) {
    return std::equal(name.begin(), name.end(), type_name, type_name + std::strlen(type_name),
                      [](char a, char b) {
                        return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
                      });
  };
  if (same("i2_s")) return GgmlType::I2_S;
  if (same("f16")) return GgmlType::F16;
  for (GgmlType t : kBlockTypes)
    if (same(ggml_type_name(t))) return t;
  std::string known = "i2_s, f16";
  for (GgmlType t : kBlockTypes) known += std::string(", ") + ggml_type_name(t);
  fail("--type: '", name, "' is not a type bench-gemv makes (known: ", known, ")");
}

// The family `--kernel auto` gives w (dispatch.h: the highest positive score).
const KernelFamily* auto_family(const WeightView& w) {
  const KernelFamily* best = nullptr;
  for (const auto& f : kernel_families())
    if (f.score(w, cpu_features()) > (best ? best->score(w, cpu_features()) : 0)) best = &f;
  return best;
}

int run_bench(const BenchGemvOptions& o) {
  const GgmlType type = bench_type(o.type);
  std::vector<int> threads;
  for (const auto& t : split(o.threads)) threads.push_back(std::stoi(t));
  if (threads.empty()) fail("-t: no thread counts");
  std::map<int, std::unique_ptr<ThreadPool>> pools;
  std::map<int, double> bandwidth;
  for (int t : threads) {
    if (t < 1) fail("-t: thread count ", t, " is not positive");
    pools[t] = std::make_unique<ThreadPool>(t);
    bandwidth[t] = measure_read_bandwidth_gbps(*pools[t], t);
  }
  ThreadPool& make_pool = *pools.rbegin()->second;

  print_machine_and_date();
  for (int t : threads) std::printf("read bandwidth, %d thread%s: %.1f GB/s\n", t, t > 1 ? "s" : "", bandwidth[t]);
  std::printf("timing: %s\n", o.chain ? "copies of each matrix (2x the last-level cache) back to back, as a decode "
                                         "step runs its matrices, the kernels' passes taking turns with a plain read "
                                         "of as many bytes (the % column is of that read); median of passes (ref: "
                                         "single cold calls)"
                                       : "single calls, each after a cache eviction; median");
  std::printf("\n| matrix | kernel | threads | us/call | GB/s | %% of read BW | x ref |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");

  const auto matrices = selected_matrices(o.shapes);
  for (size_t i = 0; i < matrices.size(); ++i) {
    const Matrix& mx = matrices[i];
    if (mx.cols % ggml_type_info(type).block_size != 0) {
      std::printf("| %s %s | (K is not a multiple of %s's blocks) | | | | | |\n", mx.model.c_str(), mx.shape().c_str(),
                  o.type.c_str());
      continue;
    }
    const auto bytes = type == GgmlType::I2_S  ? random_i2s(mx.rows, mx.cols, 1000 + i)
                       : type == GgmlType::F16 ? random_f16(mx.rows, mx.cols, 1000 + i)
                                               : random_blocks(type, mx.rows, mx.cols, 1000 + i);
    const WeightView w{mx.model + " " + mx.shape(), type, mx.rows, mx.cols, bytes.data()};
    Rng rng(7);
    std::vector<float> x(static_cast<size_t>(mx.cols));
    for (auto& v : x) v = static_cast<float>(rng.normal());
    ActivationBatch in(1, mx.cols);
    in.set(x.data(), 1, mx.cols);

    std::vector<const KernelFamily*> families;
    if (o.kernels.empty()) {
      for (const auto& f : kernel_families()) {
        const bool alias = std::any_of(families.begin(), families.end(), [&](const KernelFamily* g) { return g->make == f.make; });
        if (!alias && f.score(w, cpu_features()) != 0) families.push_back(&f);
      }
    } else {
      for (const auto& listed : split(o.kernels)) {
        if (listed == "auto") {
          const KernelFamily* f = auto_family(w);
          if (f != nullptr && f->score(w, cpu_features()) != 0) families.push_back(f);
          continue;
        }
        for (const auto& name : forced_kernel_names(listed)) {  // "q8k": each *_q8k family; unknown: Error
          const KernelFamily* f = find_kernel_family(name);
          if (f->score(w, cpu_features()) != 0) families.push_back(f);
        }
      }
    }
    // Build every family's copies first: with --chain their passes and a plain
    // read of as many bytes then take turns, and each % is of that read (the
    // VM's bandwidth moves minute by minute; the probe above is only the start's).
    std::vector<std::vector<std::unique_ptr<Matmul>>> copies;
    std::vector<bool> is_ref;
    for (const KernelFamily* f : families) is_ref.push_back(std::string(f->name) == "ref");
    const auto ref = std::find(is_ref.begin(), is_ref.end(), true);
    // The chains of every family but ref, and the read, take turns.
    const int sharing = static_cast<int>(families.size()) + 1 - (ref != is_ref.end());
    std::vector<const ChainsInTurn::Chain*> chains;
    std::vector<size_t> chain_family;
    for (size_t j = 0; j < families.size(); ++j) {
      const auto make = [&] { return families[j]->make(w, cpu_features(), make_pool); };
      copies.push_back(make_copies(1, make));  // huge pages, as Model::load places its matrices
      if (o.chain && !is_ref[j])
        for (auto& m : make_copies(chain_copies(copies.back().front()->weight_bytes(), sharing) - 1, make))
          copies.back().push_back(std::move(m));
    }
    for (size_t j = 0; j < families.size(); ++j)  // once all are built: `copies` moves its elements as it grows
      if (o.chain && !is_ref[j]) chains.push_back(&copies[j]), chain_family.push_back(j);
    const std::unique_ptr<ChainsInTurn> turns = chains.empty() ? nullptr : std::make_unique<ChainsInTurn>(chains);
    std::map<std::pair<size_t, int>, double> seconds;  // (family, threads)
    std::map<int, double> read_alongside;
    for (int t : threads) {
      ThreadPool& pool = *pools[t];
      for (size_t j = 0; j < families.size(); ++j)
        if (!o.chain || is_ref[j])
          seconds[{j, t}] = seconds_per_matmul(*copies[j].front(), in, pool, is_ref[j] ? 0 : o.min_seconds,
                                               is_ref[j] ? 2 : o.repeats);
      if (turns == nullptr) continue;
      const ChainsInTurn::Times times = turns->time(in, pool, t, o.repeats);
      read_alongside[t] = times.read_gbps;
      for (size_t c = 0; c < chains.size(); ++c) seconds[{chain_family[c], t}] = times.seconds[c];
    }

    const std::string name = mx.model + " " + mx.shape();
    for (int t : threads)
      if (read_alongside.count(t))
        std::printf("| %s | plain read, alongside | %d | | %.1f | 100%% | |\n", name.c_str(), t, read_alongside[t]);
    for (size_t j = 0; j < families.size(); ++j) {
      const Matmul& m = *copies[j].front();
      for (int t : threads) {
        const double s = seconds[{j, t}];
        const double gbps = static_cast<double>(m.weight_bytes()) / s / 1e9;
        const double read = read_alongside.count(t) ? read_alongside[t] : bandwidth[t];
        std::printf("| %s | %s | %d | %.1f | %.1f | %.0f%% |", name.c_str(), m.kernel_name().c_str(), t, s * 1e6, gbps,
                    100 * gbps / read);
        if (ref != is_ref.end()) {
          std::printf(" %.1f |\n", seconds[{static_cast<size_t>(ref - is_ref.begin()), t}] / s);
        } else {
          std::printf(" |\n");
        }
      }
    }
    std::fflush(stdout);
  }
  return 0;
}

CommandMain setup_bench_gemv(CLI::App& app) {
  auto o = std::make_shared<BenchGemvOptions>();
  app.add_option("--kernel", o->kernels,
                 "comma list of kernels to time (default: every one that runs the matrix, ref included; known: " +
                     kernel_names() + ")");
  app.add_option("-t,--threads", o->threads, "comma list of thread counts")->capture_default_str();
  app.add_option("--shapes", o->shapes, "comma list of models (bitnet-2b4t, bitnet-large, llama3-8b-1.58) or NxK (any shape: 128256x2560 is the "
                 "2B-4T head)");
  app.add_option("-r,--repeats", o->repeats, "timed calls per row, at least (ref: 2)")->capture_default_str();
  app.add_option("--min-time", o->min_seconds, "seconds of timed calls per row, at least")->capture_default_str();
  app.add_option("--type", o->type, "the weights' type: i2_s (random ternary), f16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, iq4_xs, q2_0, q1_0, q2_K, q3_K, q4_K, q5_K or q6_K")
      ->capture_default_str();
  app.add_flag("--chain", o->chain,
               "time copies of each matrix back to back, as a decode step runs its matrices (-r: passes), instead of "
               "single calls after a cache eviction");
  return [o] { return run_bench(*o); };
}

const CommandRegistration bench_gemv_command{"bench-gemv", "time the GEMV kernels on real model shapes", setup_bench_gemv};

}  // namespace
}  // namespace lowbit::tools
