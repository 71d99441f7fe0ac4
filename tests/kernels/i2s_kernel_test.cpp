#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/half.h"
#include "kernels/dispatch.h"
#include "kernels/i2s_amx_gemm.h"
#include "kernels/matmul.h"
#include "kernels/i2s_lut_gemm.h"
#include "kernels/i2s_matmul.h"
#include "kernels/i2s_tile_dots.h"
#include "kernels/i2s_tiles.h"
#include "ternary_test_support.h"

namespace lowbit {
namespace {

using test::encode_ternary;
using test::isa_variants;
using test::random_activations;
using test::random_ternary;
using test::ternary_dot;
using test::expect_bitwise_equal;
using test::run_matmul;

// prefetch: the AVX-512 one-token loop as on Intel (software prefetch) or as on
// AMD (none); the other levels have one form.
I2sTileDots tile_dots_for(const std::string& isa, bool prefetch) {
#if LOWBIT_X86_KERNELS
  if (isa.rfind("avx512", 0) == 0) return i2s_tile_dots_avx512(isa == "avx512-vnni", prefetch);
  return i2s_tile_dots_avx2(isa == "avx2-vnni");
#else
  EXPECT_EQ(isa, "neon-dotprod");
  (void)prefetch;
  return i2s_tile_dots_neon();
#endif
}

// The ISA levels, with plain AVX2 both as on AMD (one token reads tiles in
// pairs: "avx2-pairs") and as elsewhere ("avx2"), whatever this CPU's vendor,
// and AVX-512 VNNI with AMX ("avx512-vnni-amx": many tokens on tiles) where
// this CPU has it, and without.
std::vector<test::IsaVariant> i2s_variants() {
  std::vector<test::IsaVariant> v;
  for (auto isa : isa_variants()) {
    if (isa.name == "avx512-vnni" && isa.cpu.amx_int8) {
      v.push_back({"avx512-vnni-amx", isa.cpu});
      isa.cpu.amx_int8 = false;
    }
    if (isa.name != "avx2") {
      v.push_back(isa);
      continue;
    }
    isa.cpu.vendor_amd = true;
    v.push_back({"avx2-pairs", isa.cpu});
    isa.cpu.vendor_amd = false;
    v.push_back(isa);
  }
  return v;
}



TEST(I2sKernel, TilesHoldEveryCode) {
  const int64_t n = 21, k = 200;  // neither a whole tile nor a whole line
  const auto t = random_ternary(n, k, 1);
  I2sTiles tiles(n, k);
  for (int64_t r = 0; r < n; ++r) tiles.set_row(r, t.data() + r * k);
  EXPECT_EQ(tiles.tiles, 2);
  EXPECT_EQ(tiles.groups, 13);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) ASSERT_EQ(tiles.code(r, c), t[r * k + c] + 1) << r << "," << c;
  for (int64_t r = n; r < 32; ++r) EXPECT_EQ(tiles.code(r, 5), 0);
  for (int64_t c = k; c < 208; ++c) EXPECT_EQ(tiles.code(3, c), 0);
}

// The integer core at every ISA level, with activations nobody's quantizer makes
// (-128) and at the extremes everywhere.
TEST(I2sKernel, TileDotsExactAtEveryIsa) {
  const auto variants = isa_variants();
  ASSERT_FALSE(variants.empty()) << "neither AVX2 nor NEON with dotprod: nothing to test";
  Rng rng(7);
  for (int64_t k : {16, 48, 128, 2560, 6912}) {
    const auto t = random_ternary(16, k, static_cast<uint64_t>(k));
    I2sTiles tiles(16, k);
    for (int64_t r = 0; r < 16; ++r) tiles.set_row(r, t.data() + r * k);
    const int64_t stride = tiles.groups * 16 + 4;  // not a multiple of 64 on purpose
    for (int pattern = 0; pattern < 4; ++pattern) {
      const int tokens = kI2sMaxTokens;
      const auto q = test::pattern_activations(tokens, stride, k, pattern, rng);
      for (const auto& isa : variants)
        for (const bool prefetch : {false, true})
          for (int n_tokens : {1, 3, tokens}) {
            std::vector<int32_t> out(static_cast<size_t>(16 * n_tokens), 12345);
            tile_dots_for(isa.name, prefetch)(tiles.tile(0), tiles.groups, q.data(), stride, n_tokens, out.data());
            test::expect_code_dots(t, k, q, stride, n_tokens, out,
                                   isa.name + (prefetch ? " prefetch" : "") + " pattern " + std::to_string(pattern));
          }
    }
  }
}

// The AVX-512 one-token loop keeps codes at x1, x4, x16, x64 in its int32
// accumulators and takes rows up to 2^18 columns; longer rows fall back. Both
// sides of the limit, with every code +1 and every activation at an extreme.
// Also the plain-AVX2 loops' int16 sums at their bound (-32768), one token and many.
TEST(I2sKernel, TileDotsExactOnTheLongestRows) {
  const auto variants = isa_variants();
  ASSERT_FALSE(variants.empty()) << "neither AVX2 nor NEON with dotprod: nothing to test";
  for (int64_t k : {int64_t{1} << 18, (int64_t{1} << 18) + 16}) {
    const std::vector<int8_t> t(static_cast<size_t>(16 * k), 1);
    I2sTiles tiles(16, k);
    for (int64_t r = 0; r < 16; ++r) tiles.set_row(r, t.data() + r * k);
    for (const int8_t a : {int8_t{-128}, int8_t{127}}) {
      const std::vector<int8_t> q(static_cast<size_t>(5 * k), a);
      const int32_t expect = static_cast<int32_t>(2 * a * k);
      for (const auto& isa : variants)
        for (const bool prefetch : {false, true})
          for (int n_tokens : {1, 2, 5}) {
            std::vector<int32_t> out(static_cast<size_t>(16 * n_tokens), 12345);
            tile_dots_for(isa.name, prefetch)(tiles.tile(0), tiles.groups, q.data(), k, n_tokens, out.data());
            for (int32_t v : out)
              ASSERT_EQ(v, expect) << isa.name << " prefetch " << prefetch << " k=" << k << " a=" << int{a}
                                   << " tokens=" << n_tokens;
          }
    }
  }
}

struct Shape {
  int64_t n, k, tokens;
};

#if LOWBIT_X86_KERNELS  // the pair loop, the lookup GEMM (AVX2) and the AMX GEMM are x86 code
// The pair loops (two tiles side by side: plain AVX2's, and AVX-512's with
// and without VNNI where this CPU has AVX-512) give each tile the dots it gets
// alone, for widths that end mid 8-group block, every activation pattern, and
// at the int16 bound (every code +1, every activation -128).
TEST(I2sKernel, PairDotsAreEachTilesOwn) {
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the pair loop cannot run here";
  std::vector<std::pair<std::string, I2sPairDots>> pairs = {{"avx2", i2s_pair_dots_avx2(false)}};
  EXPECT_EQ(i2s_pair_dots_avx2(true), nullptr);
  if (cpu_features().has_avx512_level()) {
    pairs.emplace_back("avx512", i2s_pair_dots_avx512(false));
    if (cpu_features().avx512vnni) pairs.emplace_back("avx512-vnni", i2s_pair_dots_avx512(true));
  }
  for (const auto& [name, pair] : pairs) {
    ASSERT_NE(pair, nullptr) << name;
    Rng rng(9);
    for (int64_t k : {16, 48, 128, 2560, 6912}) {
      const auto t = random_ternary(32, k, static_cast<uint64_t>(k) + 3);
      I2sTiles tiles(32, k);
      for (int64_t r = 0; r < 32; ++r) tiles.set_row(r, t.data() + r * k);
      for (int pattern = 0; pattern < 4; ++pattern) {
        const auto q = test::pattern_activations(1, tiles.groups * 16, k, pattern, rng);
        std::vector<int32_t> out(32, 12345);
        pair(tiles.tile(0), tiles.tile(1), tiles.groups, q.data(), out.data());
        test::expect_code_dots(t, k, q, tiles.groups * 16, 1, out, name + " pair, pattern " + std::to_string(pattern),
                               32, 32);
      }
    }
    const int64_t k = 4096;
    const std::vector<int8_t> ones(static_cast<size_t>(32 * k), 1);
    I2sTiles tiles(32, k);
    for (int64_t r = 0; r < 32; ++r) tiles.set_row(r, ones.data() + r * k);
    const std::vector<int8_t> q(static_cast<size_t>(k), -128);
    std::vector<int32_t> out(32, 12345);
    pair(tiles.tile(1), tiles.tile(0), tiles.groups, q.data(), out.data());
    for (int32_t v : out) ASSERT_EQ(v, 2 * -128 * k) << name;
  }
}

// A many-token GEMM of I2sTiles (`gemm(tiles, k, tile_begin, tile_end, q,
// stride, tokens, sink)`) on each shape and activation pattern, called for the
// first tiles and then the rest (any range works): every tile and block of
// `block` tokens reaches the sink once, with the exact signed dots, or with
// the dots of the codes t + 1 where `codes` (the caller subtracts sum(q)).
template <class Gemm>
void expect_exact_gemm_dots(const std::vector<Shape>& shapes, uint64_t seed, int block, bool codes, Gemm gemm) {
  Rng rng(seed);
  for (const Shape& s : shapes) {
    const auto t = random_ternary(s.n, s.k, static_cast<uint64_t>(s.n * seed + s.k));
    SpannedTiles<I2sTiles> tiles(s.n, s.k, I2sTiles::kColumns, 252);
    for (int64_t r = 0; r < s.n; ++r) tiles.set_row(r, t.data() + r * s.k);
    const int64_t stride = (s.k + 63) / 64 * 64, n_tiles = (s.n + 15) / 16;
    for (int pattern = 0; pattern < 4; ++pattern) {
      const auto q = test::pattern_activations(static_cast<int>(s.tokens), stride, s.k, pattern, rng);
      std::vector<int> seen(static_cast<size_t>(n_tiles * s.tokens), 0);
      const auto sink = [&](int64_t tile, int64_t t0, int tokens, const int32_t* dots) {
        ASSERT_EQ(t0 % block, 0);
        ASSERT_EQ(tokens, std::min<int64_t>(block, s.tokens - t0));
        for (int tk = 0; tk < tokens; ++tk) {
          ++seen[static_cast<size_t>(tile * s.tokens + t0 + tk)];
          const int8_t* qt = q.data() + (t0 + tk) * stride;
          int32_t sum_q = 0;
          for (int64_t c = 0; c < s.k && codes; ++c) sum_q += qt[c];
          for (int r = 0; r < 16 && 16 * tile + r < s.n; ++r) {
            const int64_t row = 16 * tile + r;
            ASSERT_EQ(dots[16 * tk + r], ternary_dot(t.data() + row * s.k, qt, s.k) + sum_q)
                << s.n << "x" << s.k << " pattern " << pattern << " row " << row << " token " << t0 + tk;
          }
        }
      };
      const int64_t split = n_tiles / 2;
      gemm(tiles, s.k, 0, split, q.data(), stride, s.tokens, sink);
      gemm(tiles, s.k, split, n_tiles, q.data(), stride, s.tokens, sink);
      for (int v : seen) ASSERT_EQ(v, 1) << s.n << "x" << s.k;
    }
  }
}

// The plain-AVX2 table-lookup GEMM (many tokens), for K of an odd number of
// lines (a last block of one line), K in spans (6912: 2, 9088: 3), token
// counts that end mid block, and every activation pattern (-128 too).
TEST(I2sKernel, LookupGemmGivesExactSignedDots) {
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the lookup GEMM cannot run here";
  expect_exact_gemm_dots({{16, 16, 16}, {33, 200, 17}, {21, 640, 5}, {40, 6912, 32}, {16, 9088, 16}}, 7,
                         kI2sLutTokens, /*codes=*/false, i2s_lut_gemm_avx2);
}

// The AMX GEMM (many tokens on tile registers), for K of lines that end mid
// 64-column block (a span's last block part zeros), K in spans (6912: 2,
// 9088: 3) and in slices of 8 blocks (640: 8 + 2; 6912: slices across the
// spans' seam), an odd count of weight tiles (a last one alone) and of token
// blocks (a last one alone), token counts that end mid block (zero-padded),
// activations at -128 and +127 everywhere, and chunks of tokens (at K = 6912
// a chunk is 8 blocks: 150 tokens make two; at 9088, 6: 70 tokens make one, 150 two);
// and one token block (up to 16 tokens, three weight tiles at a time) or two
// (17 to 32 tokens, two tiles at a time) for 1 to 5 tiles a call (the tests
// split each matrix's tiles in two calls).
// q's rows (stride bytes) as the AMX GEMM reads them (ActivationBatch::build_tile_rows).
AlignedBuffer<int8_t> amx_tile_rows(const SpannedTiles<I2sTiles>& tiles, const int8_t* q, int64_t stride, int64_t tokens) {
  const std::vector<int64_t> cols = i2s_amx_block_columns(tiles);
  const int64_t blocks = (tokens + 15) / 16, block_bytes = static_cast<int64_t>(cols.size()) * 16 * 64;
  AlignedBuffer<int8_t> rows(static_cast<size_t>(blocks * block_bytes));
  for (int64_t b = 0; b < blocks; ++b)
    ActivationBatch::lay_tile_rows(q, stride, stride, tokens, b, cols, rows.data() + b * block_bytes);
  return rows;
}

TEST(I2sKernel, AmxGemmGivesExactCodeDots) {
  if (!cpu_features().amx_int8) GTEST_SKIP() << "no AMX-INT8 (or no permission for tile data): the AMX GEMM cannot run here";
  expect_exact_gemm_dots({{16, 64, 16}, {33, 400, 17}, {21, 640, 5}, {40, 6912, 150}, {16, 9088, 70}, {48, 9088, 150},
                          {100, 6912, 12}, {40, 9088, 9}, {140, 2560, 16}, {100, 6912, 32}, {40, 9088, 20},
                          {48, 640, 24}},
                         5,
                         kI2sAmxTokens, /*codes=*/true,
                         [](const SpannedTiles<I2sTiles>& tiles, int64_t /* k */, int64_t begin, int64_t end,
                            const int8_t* q, int64_t stride, int64_t tokens, I2sAmxSink sink) {
                           const auto rows = amx_tile_rows(tiles, q, stride, tokens);
                           i2s_amx_gemm(tiles, begin, end, rows.data(), tokens, sink);
                         });
}

// The AMX path's floats from one block of dots, bitwise the scalar rescale
// (TernaryMatmul::write_rows for codes), for every count of rows and tokens
// up to 16 (masked loads and stores), dots and sums at the int32 extremes,
// and activation scales from tiny to huge. Nothing past the rows is written.
TEST(I2sKernel, AmxWriteRowsRescaleBitwise) {
  if (!cpu_features().has_avx512_level()) GTEST_SKIP() << "no AVX-512: the AMX rescale cannot run here";
  Rng rng(3);
  const int64_t stride = 21;
  const float scale = 0.8125f;
  for (int tokens = 1; tokens <= 16; ++tokens)
    for (int rows = 1; rows <= 16; ++rows) {
      int32_t dots[256];
      int32_t sum[16];
      float act_scale[16];
      for (int i = 0; i < 256; ++i)
        dots[i] = i % 7 == 0 ? (i % 2 ? INT32_MAX / 2 : INT32_MIN / 2) : static_cast<int32_t>(rng.below(2000001)) - 1000000;
      for (int t = 0; t < 16; ++t) {
        sum[t] = t % 5 == 0 ? INT32_MIN / 2 + 1 : static_cast<int32_t>(rng.below(20001)) - 10000;
        act_scale[t] = std::ldexp(1.0f + static_cast<float>(rng.below(1000)) / 1000.0f, static_cast<int>(rng.below(60)) - 30);
      }
      std::vector<float> y(static_cast<size_t>(16 * stride), -7.0f);
      i2s_amx_write_rows(dots, tokens, rows, sum, act_scale, scale, y.data(), stride);
      for (int t = 0; t < 16; ++t)
        for (int r = 0; r < stride; ++r) {
          const float got = y[static_cast<size_t>(t * stride + r)];
          if (t < tokens && r < rows) {
            const float inv = scale / act_scale[t] * 1.0f;
            ASSERT_EQ(got, static_cast<float>(dots[16 * t + r] - sum[t]) * inv) << tokens << " tokens, " << rows << " rows";
          } else {
            ASSERT_EQ(got, -7.0f) << "written past the block: token " << t << " row " << r;
          }
        }
    }
}

// Its int16 sums at their bound: every weight +1 or -1 and every activation
// -128 or +127 over long rows (7 blocks of 32 columns per int16 run).
TEST(I2sKernel, LookupGemmExactAtTheInt16Bound) {
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the lookup GEMM cannot run here";
  const int64_t k = 4000, tokens = 16;  // 125 lines: an odd count, 18 int16 runs
  for (const int8_t w : {int8_t{1}, int8_t{-1}})
    for (const int8_t a : {int8_t{-128}, int8_t{127}}) {
      const std::vector<int8_t> t(static_cast<size_t>(16 * k), w);
      SpannedTiles<I2sTiles> tiles(16, k, I2sTiles::kColumns, 252);
      for (int64_t r = 0; r < 16; ++r) tiles.set_row(r, t.data() + r * k);
      const int64_t stride = (k + 63) / 64 * 64;
      std::vector<int8_t> q(static_cast<size_t>(tokens * stride), 0);
      for (int64_t tk = 0; tk < tokens; ++tk) std::fill_n(q.begin() + tk * stride, k, a);
      int calls = 0;
      i2s_lut_gemm_avx2(tiles, k, 0, 1, q.data(), stride, tokens, [&](int64_t, int64_t, int n, const int32_t* dots) {
        ++calls;
        for (int i = 0; i < 16 * n; ++i) ASSERT_EQ(dots[i], int32_t{w} * a * k) << int{w} << " x " << int{a};
      });
      EXPECT_EQ(calls, 1);
    }
}

// The int16 sums are widened when a token's |x| since the last widening could
// pass 32767, per token: here tokens differ in magnitude, and each one's
// columns turn from small to extreme at a different column, so the widenings
// fall at uneven blocks.
// Every sum is as large as it can be (all weights one sign).
TEST(I2sKernel, LookupGemmWidensByEachTokensMagnitude) {
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "no AVX2: the lookup GEMM cannot run here";
  const int64_t k = 6000, tokens = 16, stride = (k + 63) / 64 * 64;
  std::vector<int8_t> q(static_cast<size_t>(tokens * stride), 0);
  std::vector<int64_t> sum(tokens, 0);
  for (int64_t tk = 0; tk < tokens; ++tk)
    for (int64_t c = 0; c < k; ++c) {
      const int v = c < (2 + tk) * 173 ? static_cast<int>(tk * 5) : (tk % 2 ? 127 : -128);
      q[static_cast<size_t>(tk * stride + c)] = static_cast<int8_t>(v);
      sum[static_cast<size_t>(tk)] += v;
    }
  for (const int8_t w : {int8_t{1}, int8_t{-1}}) {
    const std::vector<int8_t> t(static_cast<size_t>(16 * k), w);
    SpannedTiles<I2sTiles> tiles(16, k, I2sTiles::kColumns, 252);
    for (int64_t r = 0; r < 16; ++r) tiles.set_row(r, t.data() + r * k);
    i2s_lut_gemm_avx2(tiles, k, 0, 1, q.data(), stride, tokens, [&](int64_t, int64_t, int n, const int32_t* dots) {
      for (int tk = 0; tk < n; ++tk)
        for (int r = 0; r < 16; ++r) ASSERT_EQ(dots[16 * tk + r], w * sum[static_cast<size_t>(tk)]) << "token " << tk;
    });
  }
}
#endif

// Bitwise the ref kernel's y, for odd shapes and the BitNet 2B-4T matrices.
// Rows past 252 lines are taken in spans: K = 6912 and 4352 in 2 equal ones,
// 9088 in 3 (190, 190, 188 lines). From 16 tokens plain AVX2 takes blocks of
// 16 by table lookup (16, 28, 40, 45, 64: all of them; 35: 32, then 3 by tile dots).
TEST(I2sKernel, MatchesReferenceBitwiseAtEveryIsa) {
  ThreadPool pool(2);
  const std::vector<Shape> shapes = {{1, 128, 1},     {17, 128, 3},    {69, 384, 8},     {40, 640, 13},
                                     {2560, 2560, 1}, {640, 2560, 2},  {6912, 2560, 1},  {2560, 6912, 1},
                                     {33, 6912, 9},   {32, 4352, 10},  {16, 9088, 3},    {40, 640, 1},
                                     {33, 6912, 1},   {48, 9088, 1},   {40, 640, 16},   {32, 384, 35},
                                     {70, 6912, 28},  {48, 9088, 45},  {21, 640, 40},   {2560, 2560, 64}};
  for (const Shape& s : shapes) {
    const auto t = random_ternary(s.n, s.k, static_cast<uint64_t>(s.n * 31 + s.k));
    const auto bytes = encode_ternary(GgmlType::I2_S, t, s.n, s.k, 0.8125f);
    const WeightView w{"blk.0.test", GgmlType::I2_S, s.n, s.k, bytes.data()};
    const auto x = random_activations(s.tokens, s.k, static_cast<uint64_t>(s.tokens));
    const auto expect = run_matmul(*make_reference_matmul(w), x, s.tokens, pool);
    for (const auto& isa : i2s_variants()) {
      const auto m = make_matmul(w, "i2s", pool, isa.cpu);
      EXPECT_EQ(m->kernel_name(), "i2s/" + isa.name);
      expect_bitwise_equal(run_matmul(*m, x, s.tokens, pool), expect,
                           isa.name + " " + std::to_string(s.n) + "x" + std::to_string(s.k));
    }
  }
}

// Every activation at +127 or -127 (the most absmax makes): the largest sums.
TEST(I2sKernel, ExtremeActivationsBitwise) {
  const auto variants = i2s_variants();
  ASSERT_FALSE(variants.empty()) << "neither AVX2 nor NEON with dotprod: nothing to test";
  test::expect_extreme_activations_bitwise("i2s", variants);
}

// TQ1_0 / TQ2_0 with one d per tensor: the integer dot is exact, then one
// rescale y = float(dot) * (d / act_scale); the ref sums per-block floats, so
// the two agree to float rounding (docs/kernels.md).
TEST(I2sKernel, TernaryBlockFormatsWithSharedScale) {
  ThreadPool pool(2);
  const int64_t n = 37, k = 768, tokens = 4;
  const float d = 0.0431f;
  const auto t = random_ternary(n, k, 11);
  const auto x = random_activations(tokens, k, 12);
  for (GgmlType type : {GgmlType::TQ1_0, GgmlType::TQ2_0}) {
    const auto bytes = encode_ternary(type, t, n, k, d);
    const WeightView w{"tq", type, n, k, bytes.data()};
    ActivationBatch in(tokens, k);
    in.set(x.data(), tokens, k);
    in.quantize(pool);
    const auto ref = run_matmul(*make_reference_matmul(w), x, tokens, pool);
    const float d_stored = fp16_to_float(float_to_fp16(d));
    for (const auto& isa : i2s_variants()) {
      const auto m = make_matmul(w, "i2s", pool, isa.cpu);
      ASSERT_EQ(m->kernel_name(), "i2s/" + isa.name);
      const auto y = run_matmul(*m, x, tokens, pool);
      for (int64_t tk = 0; tk < tokens; ++tk) {
        const int8_t* q = in.q() + tk * in.k_padded();
        double abs_sum = 0;
        for (int64_t i = 0; i < k; ++i) abs_sum += std::abs(q[i]);
        for (int64_t r = 0; r < n; ++r) {
          const int32_t dot = ternary_dot(t.data() + r * k, q, k);
          const size_t i = static_cast<size_t>(tk * n + r);
          ASSERT_EQ(y[i], static_cast<float>(dot) * (d_stored / in.scale()[tk])) << ggml_type_name(type);
          const double bound = (k / 256 + 2) * std::ldexp(1.0, -23) * d_stored * abs_sum / in.scale()[tk];
          ASSERT_NEAR(y[i], ref[i], bound) << ggml_type_name(type) << " " << isa.name << " row " << r;
        }
      }
    }
  }
}

TEST(I2sKernel, BlockFormatWithTwoScalesIsRefused) {
  const int64_t n = 2, k = 256;
  const auto t = random_ternary(n, k, 3);
  auto bytes = encode_ternary(GgmlType::TQ2_0, t, n, k, 1.0f);
  const uint16_t other = float_to_fp16(0.5f);
  std::memcpy(bytes.data() + 66 + 64, &other, 2);  // block 1's d
  const WeightView w{"two-scales", GgmlType::TQ2_0, n, k, bytes.data()};
  EXPECT_EQ(i2s_score(w, cpu_features()), 0);
  ThreadPool pool(1);
  // Falls back to whatever auto picks for per-block scales.
  EXPECT_NE(make_matmul(w, "i2s", pool)->kernel_name().substr(0, 4), "i2s/");
}

// F16 holding {-s, 0, +s}: runnable when forced, never chosen by auto; any
// other F16 (an embedding) is refused.
TEST(I2sKernel, F16TernaryOnlyWhenForced) {
  ThreadPool pool(2);
  const int64_t n = 19, k = 100;  // K of no block size at all
  const float s = 0.375f;
  const auto t = random_ternary(n, k, 9);
  const auto bytes = encode_ternary(GgmlType::F16, t, n, k, s);
  const WeightView w{"f16", GgmlType::F16, n, k, bytes.data()};
  const std::string chosen = make_matmul(w, "auto", pool)->kernel_name();
  EXPECT_TRUE(chosen.rfind("i2s/", 0) != 0 && chosen.rfind("tl", 0) != 0) << chosen;
  for (const int64_t tokens : {1, 2, 30}) {  // one token takes its own loop; 30 the lookup GEMM on plain AVX2
    const auto x = random_activations(tokens, k, 4);
    ActivationBatch in(tokens, k);
    in.set(x.data(), tokens, k);
    in.quantize(pool);
    for (const auto& isa : i2s_variants()) {
      const auto m = make_matmul(w, "i2s", pool, isa.cpu);
      ASSERT_EQ(m->kernel_name(), "i2s/" + isa.name);
      const auto y = run_matmul(*m, x, tokens, pool);
      for (int64_t tk = 0; tk < tokens; ++tk)
        for (int64_t r = 0; r < n; ++r)
          ASSERT_EQ(y[tk * n + r], static_cast<float>(ternary_dot(t.data() + r * k, in.q() + tk * in.k_padded(), k)) *
                                       (s / in.scale()[tk]));
    }
  }
  auto not_ternary = bytes;
  not_ternary[7 * 2] = 0x11;  // some other value
  const WeightView embedding{"emb", GgmlType::F16, n, k, not_ternary.data()};
  EXPECT_EQ(i2s_score(embedding, cpu_features()), 0);
  EXPECT_NE(make_matmul(embedding, "i2s", pool)->kernel_name().substr(0, 4), "i2s/");
}

// Auto takes i2s for I2_S unless tl2v runs (AVX-512 VBMI and VNNI) on an AMD
// CPU: at every ISA variant without VBMI, and on this CPU with VBMI cleared,
// as AMD and as Intel.
TEST(I2sKernel, AutoPicksI2sForI2sWithoutVbmiOrOnIntel) {
  const auto variants = i2s_variants();
  ASSERT_FALSE(variants.empty()) << "neither AVX2 nor NEON with dotprod: nothing to test";
  const auto t = random_ternary(16, 128, 2);
  const auto bytes = encode_ternary(GgmlType::I2_S, t, 16, 128, 1.0f);
  const WeightView w{"w", GgmlType::I2_S, 16, 128, bytes.data()};
  ThreadPool pool(1);
  for (auto isa : variants)
    for (const bool amd : {false, true}) {
      if (isa.name == "avx2-pairs" || (isa.name == "avx2" && amd)) continue;  // the pair form follows the vendor
      isa.cpu.vendor_amd = amd;
      const bool tl2v_first = amd && isa.cpu.has_avx512_level() && isa.cpu.avx512vbmi && isa.cpu.avx512vnni;
      const std::string expect = tl2v_first ? std::string("tl2v/avx512-vbmi-vnni") : "i2s/" + isa.name;
      EXPECT_EQ(make_matmul(w, "auto", pool, isa.cpu)->kernel_name(), expect) << (amd ? "AMD" : "Intel");
      auto no_vbmi = isa.cpu;
      no_vbmi.avx512vbmi = false;
      EXPECT_EQ(make_matmul(w, "auto", pool, no_vbmi)->kernel_name(), "i2s/" + isa.name) << (amd ? "AMD" : "Intel");
    }
}

}  // namespace
}  // namespace lowbit
