#include "core/thread_pool.h"

#include <algorithm>
#include <utility>

#include "core/timer.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace lowbit {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

// How long an idle worker spins before sleeping. Long enough to span the gap
// between two ops of a token (so decode never pays a futex wake-up), short
// enough that an idle engine does not burn a core.
constexpr double kSpinSeconds = 2e-3;

// A caller waiting for workers to leave spins this many pauses before yielding
// its core: a worker still inside a job may be the one the OS descheduled.
constexpr int kSpinsBeforeYield = 4096;

constexpr uint64_t kClosed = uint64_t{1} << 31;
constexpr uint64_t kInsideMask = kClosed - 1;

void spin_until(const auto& done) {
  for (int spins = 0; !done(); ++spins) {
    if (spins < kSpinsBeforeYield)
      cpu_relax();
    else
      std::this_thread::yield();
  }
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)), shares_(static_cast<size_t>(n_threads_)) {
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {

constexpr uint64_t pack_range(uint64_t next, uint64_t end) { return next << 32 | end; }
constexpr int64_t range_next(uint64_t r) { return static_cast<int64_t>(r >> 32); }
constexpr int64_t range_end(uint64_t r) { return static_cast<int64_t>(r & 0xffffffffu); }

}  // namespace

bool ThreadPool::take_front(int i, int64_t* chunk) {
  std::atomic<uint64_t>& range = shares_[static_cast<size_t>(i)].range;
  uint64_t r = range.load(std::memory_order_relaxed);
  while (range_next(r) < range_end(r)) {
    if (range.compare_exchange_weak(r, r + (uint64_t{1} << 32), std::memory_order_relaxed)) {
      *chunk = range_next(r);
      return true;
    }
  }
  return false;
}

bool ThreadPool::steal_into(int i) {
  for (;;) {
    int victim = -1;
    int64_t most = 0;
    uint64_t seen = 0;
    for (int v = 0; v < n_threads_; ++v) {
      if (v == i) continue;
      const uint64_t r = shares_[static_cast<size_t>(v)].range.load(std::memory_order_relaxed);
      if (range_end(r) - range_next(r) > most) victim = v, most = range_end(r) - range_next(r), seen = r;
    }
    if (victim < 0) return false;
    // The victim keeps the front (its stream goes on); the thief gets the back
    // half, or the last chunk.
    const uint64_t mid = static_cast<uint64_t>(range_end(seen) - most / 2 - (most == 1));
    if (shares_[static_cast<size_t>(victim)].range.compare_exchange_strong(
            seen, pack_range(static_cast<uint64_t>(range_next(seen)), mid), std::memory_order_relaxed)) {
      shares_[static_cast<size_t>(i)].range.store(pack_range(mid, static_cast<uint64_t>(range_end(seen))),
                                                  std::memory_order_relaxed);
      return true;
    }
  }
}

void ThreadPool::run_chunks(int thread_index) {
  do {
    for (int64_t c; take_front(thread_index, &c);) {
      const int64_t begin = c * chunk_;
      guarded([&] { (*ranged_)(begin, std::min(n_, begin + chunk_), thread_index); });
    }
  } while (steal_into(thread_index));
}

void ThreadPool::wait_for_generation(uint32_t seen) {
  const double spin_until_time = now_seconds() + kSpinSeconds;
  int polls = 0;
  while (generation_.load(std::memory_order_acquire) == seen) {
    cpu_relax();
    if (++polls < 256) continue;
    polls = 0;
    if (now_seconds() > spin_until_time) {
      // seq_cst with publish(): a worker about to sleep either sees the new
      // generation or is seen asleep and woken.
      sleepers_.fetch_add(1);
      generation_.wait(seen);
      sleepers_.fetch_sub(1);
    }
  }
}

void ThreadPool::worker_loop(int index) {
  uint32_t seen = 0;
  for (;;) {
    wait_for_generation(seen);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    // Enter the job of generation `seen` unless it was closed (or replaced) meanwhile.
    uint64_t s = state_.load(std::memory_order_acquire);
    bool entered = false;
    while ((s >> 32) == seen && (s & kClosed) == 0) {
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) {
        entered = true;
        break;
      }
    }
    if (!entered) continue;
    if (all_ != nullptr) {
      guarded([&] { (*all_)(index, n_threads_); });
      finished_.fetch_add(1, std::memory_order_release);
    } else {
      run_chunks(index);
    }
    state_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::publish() {
  const uint32_t gen = generation_.load(std::memory_order_relaxed) + 1;
  state_.store(static_cast<uint64_t>(gen) << 32, std::memory_order_release);
  generation_.store(gen);
  if (sleepers_.load() > 0) generation_.notify_all();
}

void ThreadPool::parallel_for(int64_t n, int64_t chunk, FunctionRef<void(int64_t, int64_t, int)> fn) {
  if (n <= 0) return;
  chunk = std::max<int64_t>(1, chunk);
  if (n_threads_ == 1 || n <= chunk) {  // one thread or one chunk: no point waking anyone
    for (int64_t b = 0; b < n; b += chunk) fn(b, std::min(n, b + chunk), 0);
    return;
  }
  // Chunk numbers fit the shares' 32-bit halves (a larger chunk beyond that is only less balanced).
  chunk = std::max(chunk, (n + int64_t{0xfffffffe}) / int64_t{0xffffffff});
  ranged_ = &fn;
  all_ = nullptr;
  chunk_ = chunk;
  n_ = n;
  // Shares of whole chunks, as equal as they come.
  const int64_t chunks = (n + chunk - 1) / chunk;
  for (int i = 0; i < n_threads_; ++i)
    shares_[static_cast<size_t>(i)].range.store(
        pack_range(static_cast<uint64_t>(share_start(chunks, i, n_threads_)),
                   static_cast<uint64_t>(share_start(chunks, i + 1, n_threads_))),
        std::memory_order_relaxed);
  publish();
  run_chunks(0);
  // Every chunk is taken: close the door, then wait for those inside to finish theirs.
  state_.fetch_or(kClosed, std::memory_order_acq_rel);
  spin_until([&] { return (state_.load(std::memory_order_acquire) & kInsideMask) == 0; });
  rethrow_failure();
}

void ThreadPool::rethrow_failure() {
  if (!failed_.load(std::memory_order_acquire)) return;
  std::exception_ptr e = std::exchange(error_, nullptr);
  failed_.store(false, std::memory_order_relaxed);
  std::rethrow_exception(e);
}

void ThreadPool::run_on_all(FunctionRef<void(int, int)> fn) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  all_ = &fn;
  ranged_ = nullptr;
  finished_.store(0, std::memory_order_relaxed);
  publish();
  guarded([&] { fn(0, n_threads_); });
  // Every thread must take part, so here the caller does wait for late workers.
  spin_until([&] { return finished_.load(std::memory_order_acquire) == n_threads_ - 1; });
  state_.fetch_or(kClosed, std::memory_order_acq_rel);
  spin_until([&] { return (state_.load(std::memory_order_acquire) & kInsideMask) == 0; });
  rethrow_failure();
}

}  // namespace lowbit
