// The engine's one thread pool (design.md rule 4). Created once; the calling
// thread works too; idle workers spin briefly (a token's ops come microseconds
// apart) and then sleep on a futex. Work is split into chunks taken from atomic
// counters, so a slow core takes fewer chunks instead of holding up the rest.
// Each thread has its own contiguous share of the range (on its own cache
// line) and takes its chunks front to back, without contention (one shared
// counter cost a 4 us GEMV another 4 us here, every fetch_add moving the line
// between cores). A thread out of work steals the back half of the largest
// share left, so every thread keeps reading memory in a few long runs: thieves
// taking the owner's next chunk made two threads alternate chunk by chunk, and
// a weight stream broken that way starts cold at every chunk (the measured
// gain was within the host's noise; docs/performance.md "Session 10").
//
// A parallel_for never waits for a worker that has not started: once every
// chunk is taken the caller closes the job, and a worker arriving later skips
// it. So a worker descheduled by the OS (more threads than free cores) costs
// its share of chunks, not a time slice of the caller's.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "core/function_ref.h"

namespace lowbit {

class ThreadPool {
 public:
  // n_threads counts the caller: ThreadPool(1) runs everything inline.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(begin, end, thread_index) for chunks of [0, n) of `chunk` items
  // (the last may be shorter), taken dynamically. Returns when all are done.
  void parallel_for(int64_t n, int64_t chunk, FunctionRef<void(int64_t, int64_t, int)> fn);
  // The first of the chunks parallel_for starts thread i of n_threads on (its
  // share runs to share_start(chunks, i + 1, n_threads); others may steal
  // from its end). For callers that order uneven work items across shares.
  static int64_t share_start(int64_t chunks, int i, int n_threads) { return chunks * i / n_threads; }

  // Calls fn(thread_index, n_threads) once on every thread (static split).
  void run_on_all(FunctionRef<void(int, int)> fn);

 private:
  void worker_loop(int index);
  void wait_for_generation(uint32_t seen);
  // Publishes the job set in the fields below and wakes the workers.
  void publish();
  void run_chunks(int thread_index);
  // Runs f, keeping the first exception any thread's f throws for the caller.
  template <class F>
  void guarded(F&& f) {
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
      f();
    } catch (...) {
      bool first = false;
      if (failed_.compare_exchange_strong(first, true)) error_ = std::current_exception();
    }
  }
  // After a job: rethrows its first exception, if any, and clears it.
  void rethrow_failure();

  int n_threads_;
  std::vector<std::thread> workers_;
  // The job: written by the caller before publish(), read by workers that entered it.
  FunctionRef<void(int64_t, int64_t, int)>* ranged_ = nullptr;
  FunctionRef<void(int, int)>* all_ = nullptr;
  int64_t chunk_ = 1;
  // Thread i's share of the chunks: [next, end) in chunk numbers, packed as
  // next << 32 | end so that the owner (taking from the front) and a thief
  // (cutting off the back half) change it with one compare-exchange.
  struct alignas(64) Share {
    std::atomic<uint64_t> range{0};
  };
  // Takes share i's next chunk; false when it is empty.
  bool take_front(int i, int64_t* chunk);
  // Moves the back half of the fullest other share into thread i's; false when all are empty.
  bool steal_into(int i);
  int64_t n_ = 0;
  std::vector<Share> shares_;
  // Entry control: generation (high 32 bits) | closed (bit 31) | workers inside (low 31 bits).
  alignas(64) std::atomic<uint64_t> state_{0};
  alignas(64) std::atomic<int> finished_{0};  // run_on_all: workers done
  // The futex word workers wait on: bumped once per job.
  alignas(64) std::atomic<uint32_t> generation_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  // The current job's first exception (written by the thread that set failed_,
  // read by the caller after every thread has left the job).
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

}  // namespace lowbit
