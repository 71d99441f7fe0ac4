#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
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

// A call that throws on a worker reaches the caller as that exception (not
// std::terminate), after every thread has left the job; the pool goes on.
TEST(ThreadPool, WorkersExceptionReachesTheCaller) {
  ThreadPool pool(2);
  std::atomic<int> started{0};
  std::atomic<bool> thrown{false};
  try {
    pool.parallel_for(200, 1, [&](int64_t b, int64_t, int t) {
      started.fetch_add(1);
      if (t != 0) {
        thrown = true;
        throw std::runtime_error("chunk " + std::to_string(b) + " on a worker");
      }
      // The caller's chunks wait for the worker's throw (however late the
      // scheduler runs it), then last 1 ms each: the pool records the failure
      // long before the caller could take the remaining ~200 ms of chunks.
      for (int ms = 0; !thrown && ms < 10000; ++ms) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    ADD_FAILURE() << "parallel_for returned normally";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("on a worker"), std::string::npos) << e.what();
  }
  EXPECT_LT(started.load(), 200) << "chunks after the failure should be skipped";
  try {
    pool.run_on_all([&](int t, int) {
      if (t == 1) throw std::runtime_error("worker 1");
    });
    ADD_FAILURE() << "run_on_all returned normally";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker 1");
  }
  EXPECT_THROW(pool.parallel_for(100, 1, [&](int64_t b, int64_t, int) {
    if (b == 0) throw std::invalid_argument("the caller's chunk");
  }),
               std::invalid_argument);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(1000, 7, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) sum.fetch_add(i);
  });
  EXPECT_EQ(sum.load(), 999 * 1000 / 2);
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

// A thread out of work takes the back half of another's share, so the owner
// keeps reading its share front to back in one run (a weight stream broken
// between cores starts cold at every break). Here the worker is 2x slower:
// taking its next chunk instead (one chunk at a time), the caller would split
// the rest of its share into ~80 runs; halving leaves it a few (~2 log2 n).
TEST(ThreadPool, ASlowerThreadKeepsLongRuns) {
  ThreadPool pool(2);
  const int64_t n = 1000;
  std::vector<std::vector<int64_t>> taken(2);
  for (auto& v : taken) v.reserve(n);
  const auto spin_us = [](double us) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
    while (std::chrono::steady_clock::now() < end) {
    }
  };
  pool.parallel_for(n, 1, [&](int64_t b, int64_t, int t) {
    taken[static_cast<size_t>(t)].push_back(b);
    spin_us(t == 0 ? 10 : 20);
  });
  ASSERT_EQ(taken[0].size() + taken[1].size(), static_cast<size_t>(n));
  int runs = taken[1].empty() ? 0 : 1;
  for (size_t i = 1; i < taken[1].size(); ++i) runs += taken[1][i] != taken[1][i - 1] + 1;
  EXPECT_LE(runs, 24) << runs << " runs; the worker took " << taken[1].size() << " chunks";
}

}  // namespace
}  // namespace lowbit
