// Timing one matmul the way decoding runs it: each call finds its weights out
// of the caches, because a token streams a whole model, far larger than the
// last-level cache. Shared by `lowbit bench-gemv` and `lowbit roofline`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/stats.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"
#include "kernels/read_bandwidth.h"

namespace lowbit::tools {

// Local time as "YYYY-MM-DD HH:MM": the stamp every measuring command prints
// (on a host whose bandwidth moves by the minute, the minute matters).
std::string local_date_time();

// The lines both timing tools print above their tables: "machine: NAME, N
// hardware threads; features: ..." and "date: " local_date_time().
void print_machine_and_date();

// Median seconds of m.forward(in, ...) on `pool`, over calls each preceded by a
// read of a buffer twice the last-level cache (on the pool's threads) that
// evicts the caches.
// Calls repeat until they total min_seconds and number at least min_calls.
// `in` is quantized before the first timed call: the time is the matmul's alone
// (one quantization serves several matrices in a model).
double seconds_per_matmul(const Matmul& m, const ActivationBatch& in, ThreadPool& pool, double min_seconds,
                          int min_calls = 3);

// The other way to time it: as a decode step runs its matrices, one after
// another, each a different matrix out of cache. Model::load carves a model's
// matrices back to back in execution order (core/aligned_buffer.h), so the
// memory system streams from one matrix into the next; a single call after an
// eviction starts from an idle one and pays that start every time.
//
// chain_copies(bytes, sharing): how many copies of a matrix of `bytes` cover
// twice the last-level cache (as the eviction buffer does), 4 to 8192 of them.
// Where `sharing` chains (and reads) take turns pass by pass, each one's passes
// evict the others', so each covers 1 / sharing of that, at least 64 MiB: the
// tools keep every chain alive at once. make_copies(n) builds them under one
// HugePageScope, so they lie back to back.
int64_t chain_copies(int64_t bytes, int sharing = 1);
std::vector<std::unique_ptr<Matmul>> make_copies(int64_t n, const std::function<std::unique_ptr<Matmul>()>& make);
// Seconds of one pass over all copies, divided by their number (no warm-up).
double seconds_per_matmul_chain_pass(const std::vector<std::unique_ptr<Matmul>>& copies, const ActivationBatch& in,
                                     ThreadPool& pool);

// Chains of copies (one per kernel) timed in turn, pass by pass, with a plain
// read of as many bytes as the longest: this VM's bandwidth moves minute by
// minute, so only runs made side by side compare. time() gives each chain's
// median seconds per matmul, and the read's median GB/s, after a warm-up pass.
class ChainsInTurn {
 public:
  using Chain = std::vector<std::unique_ptr<Matmul>>;
  explicit ChainsInTurn(std::vector<const Chain*> chains);
  struct Times {
    std::vector<double> seconds;  // per chain
    double read_gbps;
  };
  Times time(const ActivationBatch& in, ThreadPool& pool, int threads, int passes) const;

 private:
  std::vector<const Chain*> chains_;
  ReadProbe probe_;
};

}  // namespace lowbit::tools
