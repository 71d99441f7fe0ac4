#include "gemv_timing.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <thread>
#include <utility>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/cpu_features.h"
#include "core/timer.h"

namespace lowbit::tools {

namespace {

// Twice the last-level cache the OS reports, at least 128 MiB (a Zen 4/5 CCD
// has 32 MiB; virtual machines may report the whole package's), at most 1 GiB.
size_t evict_bytes() {
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return std::clamp<size_t>(llc > 0 ? 2 * static_cast<size_t>(llc) : 0, size_t{128} << 20, size_t{1} << 30);
}

void evict_caches(ThreadPool& pool) {
  static AlignedBuffer<uint64_t> buffer = [] {
    AlignedBuffer<uint64_t> b(evict_bytes() / 8);
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

std::string local_date_time() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M", std::localtime(&now));
  return date;
}

void print_machine_and_date() {
  std::printf("machine: %s, %u hardware threads; features: %s\ndate: %s\n", cpu_model_name().c_str(),
              std::thread::hardware_concurrency(), cpu_features().describe().c_str(), local_date_time().c_str());
}

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
  return median(std::move(times));
}

// At most 8192 copies: a tiny matrix (tests) gets a shorter chain, not millions of objects.
int64_t chain_copies(int64_t bytes, int sharing) {
  const int64_t target = std::max<int64_t>(static_cast<int64_t>(evict_bytes()) / std::max(1, sharing), int64_t{64} << 20);
  const int64_t n = (target + bytes - 1) / std::max<int64_t>(1, bytes);
  return std::clamp<int64_t>(n, 4, 8192);
}

std::vector<std::unique_ptr<Matmul>> make_copies(int64_t n, const std::function<std::unique_ptr<Matmul>()>& make) {
  HugePageScope huge_pages;  // as Model::load places its matrices: back to back
  std::vector<std::unique_ptr<Matmul>> copies;
  for (int64_t i = 0; i < n; ++i) copies.push_back(make());
  return copies;
}

double seconds_per_matmul_chain_pass(const std::vector<std::unique_ptr<Matmul>>& copies, const ActivationBatch& in,
                                     ThreadPool& pool) {
  if (copies.empty()) return 0;
  std::vector<float> y(static_cast<size_t>(in.tokens() * copies.front()->rows()));
  in.quantize(pool);
  const double t0 = now_seconds();
  for (const auto& m : copies) m->forward(in, y.data(), pool);
  return (now_seconds() - t0) / static_cast<double>(copies.size());
}

namespace {

int64_t longest_chain_bytes(const std::vector<const ChainsInTurn::Chain*>& chains) {
  int64_t bytes = 0;
  for (const auto* c : chains)
    if (!c->empty()) bytes = std::max(bytes, c->front()->weight_bytes() * static_cast<int64_t>(c->size()));
  return bytes;
}

}  // namespace

ChainsInTurn::ChainsInTurn(std::vector<const Chain*> chains)
    : chains_(std::move(chains)), probe_(static_cast<size_t>(longest_chain_bytes(chains_))) {}

ChainsInTurn::Times ChainsInTurn::time(const ActivationBatch& in, ThreadPool& pool, int threads, int passes) const {
  for (const auto* c : chains_) seconds_per_matmul_chain_pass(*c, in, pool);  // warm-up: page faults, lazily built state
  std::vector<std::vector<double>> runs(chains_.size());
  std::vector<double> reads;
  for (int pass = 0; pass < std::max(1, passes); ++pass) {
    reads.push_back(probe_.pass_gbps(pool, threads));
    for (size_t j = 0; j < chains_.size(); ++j) runs[j].push_back(seconds_per_matmul_chain_pass(*chains_[j], in, pool));
  }
  Times t{{}, median(std::move(reads))};
  for (auto& r : runs) t.seconds.push_back(median(std::move(r)));
  return t;
}

}  // namespace lowbit::tools
