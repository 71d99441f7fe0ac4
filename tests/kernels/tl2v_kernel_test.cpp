// The tl2v kernel (TL2 triples up-converted for VNNI): layout round trip, the
// integer core exact at both ISA variants, bitwise the reference through the
// matmul, at odd shapes, extreme activations and the longest rows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/half.h"
#include "kernels/dispatch.h"
#include "kernels/tl2v_matmul.h"
#include "kernels/tl2v_tile_dots.h"
#include "kernels/spanned_tiles.h"
#include "kernels/tl2v_tiles.h"
#include "ternary_test_support.h"

namespace lowbit {
namespace {

using test::encode_ternary;
using test::random_activations;
using test::random_ternary;
using test::ternary_dot;
using test::expect_bitwise_equal;
using test::run_matmul;

bool cpu_has_vbmi() { return cpu_features().has_avx512_level() && cpu_features().avx512vbmi; }

// The variants this machine runs: with and without VNNI.
std::vector<test::IsaVariant> tl2v_variants() {
  std::vector<test::IsaVariant> v;
  CpuFeatures cpu = cpu_features();
  if (!cpu.has_avx512_level() || !cpu.avx512vbmi) return v;
  if (cpu.avx512vnni) v.push_back({"avx512-vbmi-vnni", cpu});
  cpu.avx512vnni = false;
  v.push_back({"avx512-vbmi", cpu});
  return v;
}

Tl2vTiles make_tiles(const std::vector<int8_t>& t, int64_t n, int64_t k) {
  Tl2vTiles tiles(n, k);
  for (int64_t r = 0; r < n; ++r) tiles.set_row(r, t.data() + r * k);
  return tiles;
}



// The machine the suite runs on has VBMI (CI's does); elsewhere the family must
// say it cannot run, and a forced tl2v falls back.
TEST(Tl2vKernel, RunsWhereVbmiIs) {
  std::vector<int8_t> t(32 * 128, 1);
  const auto bytes = encode_ternary(GgmlType::I2_S, t, 32, 128, 1.0f);
  const WeightView w{"w", GgmlType::I2_S, 32, 128, bytes.data()};
  ThreadPool pool(1);
  const std::string name = make_matmul(w, "tl2v", pool)->kernel_name();
  if (cpu_has_vbmi()) {
    EXPECT_EQ(name.rfind("tl2v/", 0), 0u) << name;
    if (cpu_features().avx512vnni && cpu_features().vendor_amd) {  // auto's choice on AMD only
      EXPECT_EQ(make_matmul(w, "auto", pool)->kernel_name(), name);
    }
  } else {
    EXPECT_EQ(tl2v_score(w, cpu_features()), 0);
    EXPECT_NE(name.rfind("tl2v/", 0), 0u) << name;
  }
}

TEST(Tl2vKernel, TilesHoldEveryWeight) {
  for (const int64_t k : {50, 96, 200, 2560}) {  // no block, one, two + a partial line, 26 + 4 lines
    const int64_t n = 21;                          // not a whole tile
    const auto t = random_ternary(n, k, static_cast<uint64_t>(k));
    const Tl2vTiles tiles = make_tiles(t, n, k);
    EXPECT_EQ(tiles.tiles, 2);
    EXPECT_EQ(tiles.blocks, k / 96);
    EXPECT_EQ(tiles.tail_lines, (k % 96 + 15) / 16);
    EXPECT_EQ(tiles.tile_bytes, k / 96 * 320 + (k % 96 + 15) / 16 * 64);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) ASSERT_EQ(tiles.weight(r, c), t[r * k + c]) << "k=" << k << " " << r << "," << c;
    for (int64_t c = 0; c < tiles.three_cols; ++c) ASSERT_EQ(tiles.weight(31, c), 0) << "padding row, column " << c;
  }
}

// All 27 triples, each also negated by position: the table and the sign trick.
TEST(Tl2vKernel, EveryTripleRoundTrips) {
  std::vector<int8_t> t(96 * 4, 0);  // 4 rows x 96: 32 triples per row
  int triple = 0;
  for (int64_t r = 0; r < 4; ++r)
    for (int s = 0; s < 8; ++s)
      for (int j = 0; j < 4; ++j, ++triple)
        for (int i = 0; i < 3; ++i) {
          int v = triple % 27;
          for (int d = 0; d < 2 - i; ++d) v /= 3;
          t[r * 96 + 12 * s + 4 * i + j] = static_cast<int8_t>(v % 3 - 1);
        }
  const Tl2vTiles tiles = make_tiles(t, 4, 96);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 96; ++c) ASSERT_EQ(tiles.weight(r, c), t[r * 96 + c]) << r << "," << c;
}

// One tile per call and two (the activations loaded once for both): rows of
// the first and of the second tile, and zeros where a second tile is missing.
TEST(Tl2vKernel, TileDotsExactAtBothVariants) {
  const auto variants = tl2v_variants();
  if (variants.empty()) GTEST_SKIP() << "no AVX-512 VBMI: RunsWhereVbmiIs checks the fallback";
  Rng rng(7);
  constexpr int kOutRows = kTl2vTilesPerCall * Tl2vTiles::kRows;
  for (const int64_t k : {16, 96, 100, 200, 2560, 6912}) {
    const auto t = random_ternary(kOutRows, k, static_cast<uint64_t>(k) + 1);
    const Tl2vTiles tiles = make_tiles(t, kOutRows, k);
    const int64_t stride = (k + 63) / 64 * 64 + 4;  // not a multiple of 64 on purpose
    for (int pattern = 0; pattern < 4; ++pattern) {
      const auto q = test::pattern_activations(kTl2vMaxTokens, stride, k, pattern, rng);
      for (const auto& isa : variants) {
        for (const bool nta : {true, false}) {  // the prefetch hint must not matter
          for (int n_tiles = 1; n_tiles <= kTl2vTilesPerCall; ++n_tiles) {
            for (int n_tokens = 1; n_tokens <= kTl2vMaxTokens; ++n_tokens) {
              std::vector<int32_t> out(static_cast<size_t>(kOutRows * n_tokens), 12345);
              tl2v_tile_dots_avx512(isa.cpu.avx512vnni, nta)(tiles.tile(0), tiles.tile_bytes, n_tiles, tiles.blocks,
                                                             tiles.tail_lines, q.data(), stride, n_tokens, out.data());
              const std::string what = isa.name + (nta ? " nta" : " t0") + " pattern " + std::to_string(pattern) +
                                       " tiles " + std::to_string(n_tiles) + " tokens " + std::to_string(n_tokens);
              test::expect_code_dots(t, k, q, stride, n_tokens, out, what, 16 * n_tiles, kOutRows);
              for (int tk = 0; tk < n_tokens; ++tk)
                for (int r = 16 * n_tiles; r < kOutRows; ++r)
                  ASSERT_EQ(out[tk * kOutRows + r], 0) << what << " row " << r;
            }
          }
        }
      }
    }
  }
}

// The one-token loop keeps field i at 4^i in its accumulators and takes rows
// up to 2^21 columns; longer rows take the shifting loop. Both sides of the
// limit with every weight +1 and every activation at an extreme.
TEST(Tl2vKernel, TileDotsExactOnTheLongestRows) {
  const auto variants = tl2v_variants();
  if (variants.empty()) GTEST_SKIP() << "no AVX-512 VBMI: RunsWhereVbmiIs checks the fallback";
  const int64_t limit = (int64_t{1} << 21) / 96 * 96;
  for (const int64_t k : {limit, limit + 96 + 16}) {
    const std::vector<int8_t> t(static_cast<size_t>(16 * kTl2vTilesPerCall * k), 1);
    const Tl2vTiles tiles = make_tiles(t, 16 * kTl2vTilesPerCall, k);
    for (const int8_t a : {int8_t{-128}, int8_t{127}}) {
      const std::vector<int8_t> q(static_cast<size_t>(k + 64), a);
      const int32_t expect = static_cast<int32_t>(2 * a * k);
      for (const auto& isa : variants) {
        std::vector<int32_t> out(kTl2vTilesPerCall * 16, 12345);
        for (int n_tiles = 1; n_tiles <= kTl2vTilesPerCall; ++n_tiles) {
          tl2v_tile_dots_avx512(isa.cpu.avx512vnni, true)(tiles.tile(0), tiles.tile_bytes, n_tiles, tiles.blocks,
                                                          tiles.tail_lines, q.data(), k, 1, out.data());
          for (int r = 0; r < 16 * n_tiles; ++r)
            ASSERT_EQ(out[r], expect) << isa.name << " k=" << k << " a=" << int{a} << " tiles " << n_tiles;
        }
      }
    }
  }
}

// Spans: whole units, balanced, at most max_units each; short rows keep one.
TEST(Tl2vKernel, SpanStartsSplitLongRowsEvenly) {
  EXPECT_EQ(span_starts(2560, 96, 42), std::vector<int64_t>({0}));
  EXPECT_EQ(span_starts(4032 + 95, 96, 42), std::vector<int64_t>({0}));  // 42 blocks and a tail
  EXPECT_EQ(span_starts(4128, 96, 42), std::vector<int64_t>({0, 2112}));  // 43 blocks: 22 + 21
  EXPECT_EQ(span_starts(6912, 96, 42), std::vector<int64_t>({0, 3456}));
  EXPECT_EQ(span_starts(9088, 16, 252), std::vector<int64_t>({0, 3040, 6080}));
  EXPECT_EQ(span_starts(50, 96, 42), std::vector<int64_t>({0}));  // no whole block
}

struct Shape {
  int64_t n, k, tokens;
  GgmlType type;
};

// Bitwise the ref kernel's y: I2_S at the 2B-4T shapes and odd ones, TQ2_0 and
// F16 ternary at K that leave partial tail lines. Rows past 42 blocks are
// taken in spans: K = 6912 and 8192 in 2 equal ones, 4300 in 2 and 9000 in 3
// with a tail after the last, each with one and with several token blocks.
TEST(Tl2vKernel, MatchesReferenceBitwise) {
  const auto variants = tl2v_variants();
  if (variants.empty()) GTEST_SKIP() << "no AVX-512 VBMI: RunsWhereVbmiIs checks the fallback";
  ThreadPool pool(2);
  const std::vector<Shape> shapes = {
      {1, 128, 1, GgmlType::I2_S},     {17, 128, 3, GgmlType::I2_S},   {69, 384, 8, GgmlType::I2_S},
      {40, 640, 13, GgmlType::I2_S},   {2560, 2560, 1, GgmlType::I2_S}, {640, 2560, 2, GgmlType::I2_S},
      {6912, 2560, 1, GgmlType::I2_S}, {2560, 6912, 1, GgmlType::I2_S}, {33, 6912, 9, GgmlType::I2_S},
      {21, 4300, 10, GgmlType::F16},   {9, 9000, 1, GgmlType::F16},    {17, 8192, 3, GgmlType::TQ2_0},
      {23, 768, 5, GgmlType::TQ2_0},   {19, 100, 2, GgmlType::F16},     {5, 40, 1, GgmlType::F16}};
  for (const Shape& s : shapes) {
    const auto t = random_ternary(s.n, s.k, static_cast<uint64_t>(s.n * 31 + s.k));
    // TQ2_0: one d shared by every block, so the int dot is exact.
    const auto bytes = encode_ternary(s.type, t, s.n, s.k, s.type == GgmlType::TQ2_0 ? 0.5f : 0.8125f);
    const WeightView w{"blk.0.test", s.type, s.n, s.k, bytes.data()};
    const auto x = random_activations(s.tokens, s.k, static_cast<uint64_t>(s.tokens));
    const auto expect = run_matmul(*make_matmul(w, "i2s", pool), x, s.tokens, pool);
    if (s.type == GgmlType::I2_S) expect_bitwise_equal(expect, run_matmul(*make_reference_matmul(w), x, s.tokens, pool), "i2s");
    for (const auto& isa : variants) {
      const auto m = make_matmul(w, "tl2v", pool, isa.cpu);
      ASSERT_EQ(m->kernel_name(), "tl2v/" + isa.name);
      const std::string what = isa.name + " " + std::to_string(s.n) + "x" + std::to_string(s.k);
      expect_bitwise_equal(run_matmul(*m, x, s.tokens, pool), expect, what);
      for (int64_t tk = 0; tk < s.tokens && s.tokens > 1; ++tk) {  // one token takes its own loop
        const std::vector<float> xt(x.begin() + tk * s.k, x.begin() + (tk + 1) * s.k);
        const std::vector<float> et(expect.begin() + tk * s.n, expect.begin() + (tk + 1) * s.n);
        expect_bitwise_equal(run_matmul(*m, xt, 1, pool), et, what + " token " + std::to_string(tk) + " alone");
      }
    }
  }
}

// Every activation at +-127 (the most absmax makes), weights without zeros:
// the largest sums, bitwise the reference.
TEST(Tl2vKernel, ExtremeActivationsBitwise) {
  const auto variants = tl2v_variants();
  if (variants.empty()) GTEST_SKIP() << "no AVX-512 VBMI: RunsWhereVbmiIs checks the fallback";
  test::expect_extreme_activations_bitwise("tl2v", variants);
}

// F16 holding {-s, 0, +s} runs when forced; auto computes F16 in float.
TEST(Tl2vKernel, F16TernaryOnlyWhenForced) {
  const int64_t n = 19, k = 100;
  const auto t = random_ternary(n, k, 9);
  const auto bytes = encode_ternary(GgmlType::F16, t, n, k, 0.375f);
  const WeightView w{"f16", GgmlType::F16, n, k, bytes.data()};
  EXPECT_LT(tl2v_score(w, cpu_features()), 1);
  ThreadPool pool(1);
  EXPECT_NE(make_matmul(w, "auto", pool)->kernel_name().rfind("tl2v/", 0), 0u);
}

}  // namespace
}  // namespace lowbit
