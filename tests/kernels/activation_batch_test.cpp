// ActivationBatch's per-group sums: the S_g every up-convert matrix reads,
// computed once per input and group size, kept side by side for matrices of
// different formats, forgotten when the input changes.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "quant/activation_quant.h"

namespace lowbit {
namespace {

std::vector<float> random_input(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = static_cast<float>(rng.normal());
  return x;
}

void expect_sums(const ActivationBatch& in, int64_t group) {
  const int32_t* got = in.group_sums(group);
  const int64_t groups = in.k() / group;
  std::vector<int32_t> want(static_cast<size_t>(groups));
  for (int64_t t = 0; t < in.tokens(); ++t) {
    activation_group_sums_ref(in.q() + t * in.k_padded(), in.k(), group, want.data());
    for (int64_t g = 0; g < groups; ++g) ASSERT_EQ(got[t * groups + g], want[g]) << "token " << t << " group " << g;
  }
}

TEST(ActivationBatch, GroupSumsOfSeveralSizesStayValidTogether) {
  ThreadPool pool(2);
  const int64_t tokens = 3, k = 192;  // not a multiple of 64: q rows are padded
  ActivationBatch in(4, 256);
  const auto x = random_input(tokens * k, 5);
  in.set(x.data(), tokens, k);
  in.quantize(pool);
  const int32_t* s32 = in.group_sums(32);
  in.group_sums(64);
  EXPECT_EQ(in.group_sums(32), s32) << "the same size twice: the same buffer";
  expect_sums(in, 32);
  expect_sums(in, 64);
  expect_sums(in, 48);
  expect_sums(in, 192);

  // New input: the same buffers, new sums.
  const auto y = random_input(tokens * k, 6);
  in.set(y.data(), tokens, k);
  EXPECT_THROW(in.group_sums(32), Error) << "sums of an input not yet quantized";
  in.quantize(pool);
  expect_sums(in, 64);
  expect_sums(in, 32);
}

TEST(ActivationBatch, GroupSumsRejectGroupsThatDoNotFit) {
  ThreadPool pool(1);
  ActivationBatch in(1, 4096);
  const auto x = random_input(4096, 7);
  in.set(x.data(), 1, 96);
  in.quantize(pool);
  EXPECT_THROW(in.group_sums(64), Error);  // does not divide k
  EXPECT_THROW(in.group_sums(24), Error);  // not a multiple of 16
  EXPECT_THROW(in.group_sums(0), Error);
  in.set(x.data(), 1, 4096);
  in.quantize(pool);
  for (int64_t g : {16, 32, 64, 128, 256, 512, 1024, 2048}) in.group_sums(g);
  EXPECT_THROW(in.group_sums(4096), Error) << "a ninth size at once";
}

}  // namespace
}  // namespace lowbit
