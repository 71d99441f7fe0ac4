#include "core/thread_pool.h"

#include <algorithm>

#include "core/timer.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace lowbit {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

// How long an idle worker spins before sleeping. Long enough to span the gap
// between two ops of a token (so decode never pays a futex wake-up), short
// enough that an idle engine does not burn a core.
constexpr double kSpinSeconds = 2e-3;

}  // namespace

struct ThreadPool::Job {
  FunctionRef<void(int64_t, int64_t, int)>* ranged = nullptr;
  FunctionRef<void(int, int)>* all = nullptr;
  int64_t n = 0;
  int64_t chunk = 1;
  int n_threads = 1;
  std::atomic<int64_t> next{0};
};

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_job(Job* job, int thread_index) {
  if (job->all != nullptr) {
    (*job->all)(thread_index, job->n_threads);
    return;
  }
  for (;;) {
    const int64_t begin = job->next.fetch_add(job->chunk, std::memory_order_relaxed);
    if (begin >= job->n) break;
    (*job->ranged)(begin, std::min(job->n, begin + job->chunk), thread_index);
  }
}

void ThreadPool::worker_loop(int index) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen = generation_.load(std::memory_order_acquire);
    if (gen == seen) {
      const double spin_until = now_seconds() + kSpinSeconds;
      int polls = 0;
      while ((gen = generation_.load(std::memory_order_acquire)) == seen) {
        cpu_relax();
        if (++polls == 256) {
          polls = 0;
          if (now_seconds() > spin_until) {
            sleepers_.fetch_add(1);
            generation_.wait(seen, std::memory_order_acquire);
            sleepers_.fetch_sub(1);
          }
        }
      }
    }
    seen = gen;
    if (stop_.load(std::memory_order_acquire)) return;
    run_job(job_, index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::dispatch(Job* job) {
  if (n_threads_ == 1) {
    run_job(job, 0);
    return;
  }
  job_ = job;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  // seq_cst on both sides (here and the worker's sleepers_ increment) so a
  // worker about to sleep either sees the new generation or is seen asleep.
  generation_.fetch_add(1);
  if (sleepers_.load() > 0) generation_.notify_all();
  run_job(job, 0);
  while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
}

void ThreadPool::parallel_for(int64_t n, int64_t chunk, FunctionRef<void(int64_t, int64_t, int)> fn) {
  if (n <= 0) return;
  Job job;
  job.ranged = &fn;
  job.n = n;
  job.chunk = std::max<int64_t>(1, chunk);
  job.n_threads = n_threads_;
  if (n <= job.chunk) {  // one chunk: no point waking anyone
    fn(0, n, 0);
    return;
  }
  dispatch(&job);
}

void ThreadPool::run_on_all(FunctionRef<void(int, int)> fn) {
  Job job;
  job.all = &fn;
  job.n_threads = n_threads_;
  dispatch(&job);
}

}  // namespace lowbit
