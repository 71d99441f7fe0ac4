// The engine's one thread pool (design.md rule 4). Created once; the calling
// thread works too; idle workers spin briefly (a token's ops come microseconds
// apart) and then sleep on a futex. Work is split into chunks taken from an
// atomic counter, so a slow core takes fewer chunks instead of holding up the rest.
#pragma once

#include <atomic>
#include <cstdint>
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

  // Calls fn(thread_index, n_threads) once on every thread (static split).
  void run_on_all(FunctionRef<void(int, int)> fn);

 private:
  struct Job;
  void worker_loop(int index);
  void dispatch(Job* job);
  static void run_job(Job* job, int thread_index);

  int n_threads_;
  std::vector<std::thread> workers_;
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  Job* job_ = nullptr;
};

}  // namespace lowbit
