#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace lowbit {
namespace {

TEST(ThreadPool, EveryItemExactlyOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 7, 1000, 4099}) {
      for (int64_t chunk : {1, 3, 64, 5000}) {
        std::vector<std::atomic<int>> hits(n);
        pool.parallel_for(n, chunk, [&](int64_t b, int64_t e, int t) {
          EXPECT_GE(t, 0);
          EXPECT_LT(t, threads);
          EXPECT_LE(e - b, chunk);
          for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " chunk=" << chunk;
      }
    }
  }
}

TEST(ThreadPool, RunOnAllCallsEachThreadOnce) {
  ThreadPool pool(3);
  for (int rep = 0; rep < 1000; ++rep) {
    std::atomic<int> mask{0};
    pool.run_on_all([&](int t, int n) {
      EXPECT_EQ(n, 3);
      mask.fetch_or(1 << t);
    });
    ASSERT_EQ(mask.load(), 7);
  }
}

// Back-to-back small jobs, the decode pattern: late workers must skip closed
// jobs and never run a chunk twice or run one of the next job's with the old function.
TEST(ThreadPool, BackToBackJobsStayExact) {
  for (int threads : {2, 4}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> hits(64);
    for (int rep = 0; rep < 20000; ++rep) {
      const int64_t n = 1 + rep % 61;
      pool.parallel_for(n, 1 + rep % 3, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) hits[i].fetch_add(rep, std::memory_order_relaxed);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].exchange(0), rep) << "rep " << rep << " item " << i;
      ASSERT_EQ(hits[n].load(), 0);
    }
  }
}

// A chunk that blocks does not stop the other threads from taking the rest.
TEST(ThreadPool, SlowChunkDoesNotHoldTheOthers) {
  ThreadPool pool(2);
  std::atomic<int> done_by_other{0};
  std::atomic<bool> release{false};
  pool.parallel_for(100, 1, [&](int64_t b, int64_t, int t) {
    if (b == 0) {
      // Whichever thread took chunk 0 waits until the other has done every other chunk.
      while (!release.load()) std::this_thread::yield();
      return;
    }
    if (done_by_other.fetch_add(1) + 1 == 99) release.store(true);
  });
  EXPECT_EQ(done_by_other.load(), 99);
}

}  // namespace
}  // namespace lowbit
