// forward_together: one parallel region over several matrices' work units
// must give bitwise what one forward per matrix gives, whatever the chunk
// boundaries, and fall back to forward for kernels without units.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/dispatch.h"
#include "ternary_test_support.h"

namespace lowbit {
namespace {

using test::encode_ternary;
using test::random_activations;
using test::random_ternary;

struct Matrices {
  std::vector<std::vector<uint8_t>> bytes;  // kept alive: kernels may point into them
  std::vector<std::unique_ptr<Matmul>> mats;
};

// I2_S matrices of `rows` x k with different scales, made by `kernel`.
Matrices make(const std::vector<int64_t>& rows, int64_t k, const std::string& kernel, ThreadPool& pool) {
  Matrices m;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto t = random_ternary(rows[i], k, 100 + i);
    m.bytes.push_back(encode_ternary(GgmlType::I2_S, t, rows[i], k, 0.5f + static_cast<float>(i)));
    const WeightView w{"blk.0.m" + std::to_string(i), GgmlType::I2_S, rows[i], k, m.bytes.back().data()};
    m.mats.push_back(kernel == "ref" ? make_reference_matmul(w) : make_matmul(w, kernel, pool));
  }
  return m;
}

void expect_same_as_separate(const std::vector<const Matmul*>& ms, int64_t k, int64_t tokens, ThreadPool& pool) {
  const auto x = random_activations(tokens, k, 7);
  ActivationBatch in(tokens, k);
  std::vector<std::vector<float>> separate, together;
  std::vector<float*> ys;
  for (const Matmul* m : ms) {
    separate.emplace_back(static_cast<size_t>(tokens * m->rows()));
    together.emplace_back(static_cast<size_t>(tokens * m->rows()), -1.0f);
    in.set(x.data(), tokens, k);
    m->forward(in, separate.back().data(), pool);
  }
  for (auto& y : together) ys.push_back(y.data());
  in.set(x.data(), tokens, k);
  forward_together(ms, in, ys, pool);
  for (size_t i = 0; i < ms.size(); ++i)
    for (size_t j = 0; j < separate[i].size(); ++j)
      ASSERT_EQ(together[i][j], separate[i][j]) << ms[i]->kernel_name() << " matrix " << i << " value " << j;
}

TEST(ForwardTogether, SharedRegionMatchesOneForwardPerMatrixBitwise) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (const char* kernel : {"i2s", "tl2_1", "int2"}) {
      // Row counts that are not multiples of a tile, so chunks straddle matrices mid-range.
      const Matrices m = make({40, 17, 33, 160}, 256, kernel, pool);
      std::vector<const Matmul*> ms;
      for (const auto& p : m.mats) {
        ASSERT_GT(p->work_units(), 0) << p->kernel_name();
        ms.push_back(p.get());
      }
      for (int64_t tokens : {1, 3, 9}) expect_same_as_separate(ms, 256, tokens, pool);
    }
  }
}

// Kernels of different layouts in one region: int2 (one group per row, S_g
// from the batch's group sums) between ternary tiles.
TEST(ForwardTogether, MixedKernelsShareOneRegion) {
  ThreadPool pool(2);
  const Matrices a = make({40, 17}, 256, "i2s", pool);
  const Matrices b = make({33, 160}, 256, "int2", pool);
  for (int64_t tokens : {1, 4})
    expect_same_as_separate({a.mats[0].get(), b.mats[0].get(), a.mats[1].get(), b.mats[1].get()}, 256, tokens, pool);
}

TEST(ForwardTogether, KernelsWithoutUnitsFallBackToForward) {
  ThreadPool pool(2);
  const Matrices a = make({24, 8}, 128, "i2s", pool);
  const Matrices r = make({16}, 128, "ref", pool);
  ASSERT_EQ(r.mats[0]->work_units(), 0);
  expect_same_as_separate({a.mats[0].get(), r.mats[0].get(), a.mats[1].get()}, 128, 2, pool);
}

TEST(ForwardTogether, RejectsMismatchedOutputs) {
  ThreadPool pool(1);
  const Matrices a = make({8, 8}, 128, "i2s", pool);
  std::vector<float> y(8);
  const std::vector<const Matmul*> ms = {a.mats[0].get(), a.mats[1].get()};
  const std::vector<float*> ys = {y.data()};
  ActivationBatch in(1, 128);
  const std::vector<float> x(128, 1.0f);
  in.set(x.data(), 1, 128);
  EXPECT_THROW(forward_together(ms, in, ys, pool), Error);
}

}  // namespace
}  // namespace lowbit
