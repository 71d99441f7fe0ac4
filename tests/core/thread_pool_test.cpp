#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
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

}  // namespace
}  // namespace lowbit
