// ActivationBatch's per-group sums: the S_g every up-convert matrix reads,
// computed once per input and group size, kept side by side for matrices of
// different formats, forgotten when the input changes. And its tile rows, the
// AMX GEMM's order of q.
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

// Tile rows: per block of 16 tokens and per listed column, 16 rows of 64
// bytes; rows past the last token and bytes past the padded row are zero
// (a span's last block may reach past K). Built for one column list per
// input, forgotten by set().
TEST(ActivationBatch, TileRowsHoldEachBlockOfColumnsForSixteenTokens) {
  ThreadPool pool(2);
  const int64_t tokens = 19, k = 200;  // 2 blocks, the second 3 tokens; rows padded to 256
  ActivationBatch in(32, 256);
  const auto x = random_input(tokens * k, 9);
  in.set(x.data(), tokens, k);
  const std::vector<int64_t> cols = {0, 64, 100, 224};  // 100: unaligned; 224: 32 bytes past the row
  EXPECT_THROW(in.build_tile_rows(cols, pool), Error);  // before quantization
  in.quantize(pool);
  in.build_tile_rows(cols, pool);
  const int8_t* rows = in.tile_rows(cols);
  for (int64_t b = 0; b < 2; ++b)
    for (size_t c = 0; c < cols.size(); ++c)
      for (int64_t r = 0; r < 16; ++r)
        for (int64_t i = 0; i < 64; ++i) {
          const int64_t t = 16 * b + r, col = cols[c] + i;
          const int8_t want = t < tokens && col < in.k_padded() ? in.q()[t * in.k_padded() + col] : 0;
          ASSERT_EQ(rows[((b * 4 + static_cast<int64_t>(c)) * 16 + r) * 64 + i], want)
              << "block " << b << " column " << col << " row " << r;
        }
  in.build_tile_rows(cols, pool);  // the same list: kept
  EXPECT_THROW(in.build_tile_rows({0, 128}, pool), Error);  // another list for this input
  EXPECT_THROW(in.tile_rows({0, 128}), Error);
  in.set(x.data(), tokens, k);  // new input: forgotten
  EXPECT_THROW(in.tile_rows(cols), Error);
  in.quantize(pool);
  EXPECT_THROW(in.build_tile_rows({0, 256}, pool), Error);  // a column outside the row
  in.build_tile_rows({0, 128}, pool);
  EXPECT_EQ(in.tile_rows({0, 128})[16 * 64 + 5], in.q()[128 + 5]);  // block 0, column 128, token 0
}

// Rows made and quantized in one pass (make_rows, as the decoder's norms make
// the next matmuls' input): the same q, scales and sums as quantize() over the
// finished rows, bit for bit; what was derived from earlier rows forgotten;
// without quantization, the rows made and quantize() still to come.
TEST(ActivationBatch, RowsMadeAndQuantizedInOnePassMatchQuantize) {
  ThreadPool pool(2);
  const int64_t tokens = 37, k = 208;  // rows padded to 256; groups of 16
  ActivationBatch made(64, 256), after(64, 256);
  const auto src = random_input(tokens * k, 11);
  std::vector<float> x(src.size(), 0.0f);
  after.set(src.data(), tokens, k);
  after.quantize(pool);

  made.set(x.data(), tokens, k);
  made.quantize(pool);  // of the zeros: replaced below
  made.group_sums(16);
  std::vector<int> calls(static_cast<size_t>(tokens), 0);
  made.make_rows(pool, /*quantize=*/true, [&](int64_t t) {
    ++calls[static_cast<size_t>(t)];
    for (int64_t i = 0; i < k; ++i) x[static_cast<size_t>(t * k + i)] = src[static_cast<size_t>(t * k + i)];
  });
  for (int c : calls) ASSERT_EQ(c, 1);
  ASSERT_TRUE(made.quantized());
  for (int64_t t = 0; t < tokens; ++t) {
    ASSERT_EQ(made.scale()[t], after.scale()[t]) << "token " << t;
    ASSERT_EQ(made.sum()[t], after.sum()[t]) << "token " << t;
    for (int64_t i = 0; i < made.k_padded(); ++i)
      ASSERT_EQ(made.q()[t * made.k_padded() + i], after.q()[t * after.k_padded() + i]) << "token " << t << " column " << i;
  }
  expect_sums(made, 16);  // recomputed from the new q

  made.make_rows(pool, /*quantize=*/false, [&](int64_t t) { x[static_cast<size_t>(t * k)] += 1.0f; });
  EXPECT_FALSE(made.quantized());
  EXPECT_THROW(made.group_sums(16), Error);
  made.quantize(pool);
  std::vector<int8_t> q0(static_cast<size_t>(k));
  const ActivationRowQuant r0 = quantize_activations_absmax_ref(x.data(), k, q0.data());
  EXPECT_EQ(made.scale()[0], r0.scale);
  for (int64_t i = 0; i < k; ++i) ASSERT_EQ(made.q()[i], q0[static_cast<size_t>(i)]) << "column " << i;
}

}  // namespace
}  // namespace lowbit
