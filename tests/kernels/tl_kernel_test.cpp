#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/half.h"
#include "kernels/dispatch.h"
#include "kernels/tl_luts.h"
#include "kernels/tl_tile_dots.h"
#include "kernels/tl_tiles.h"
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

std::string isa_suffix(const std::string& variant) {
  return variant.rfind("avx512", 0) == 0 ? "avx512" : variant.rfind("neon", 0) == 0 ? "neon" : "avx2";
}

// The TL kernels use no VNNI: one variant per ISA level is enough.
std::vector<test::IsaVariant> tl_isa_variants() {
  std::vector<test::IsaVariant> out;
  for (const auto& v : isa_variants())
    if (out.empty() || isa_suffix(out.back().name) != isa_suffix(v.name)) out.push_back(v);
  return out;
}

TlTileDots tile_dots_for(const std::string& variant, bool lossless) {
#if LOWBIT_X86_KERNELS
  return isa_suffix(variant) == "avx512" ? tl_tile_dots_avx512(lossless) : tl_tile_dots_avx2(lossless);
#else
  return tl_tile_dots_neon(lossless);
#endif
}

TlTiles make_tiles(const std::vector<int8_t>& t, int64_t n, int64_t k, bool triples) {
  TlTiles tiles(n, k, triples);
  for (int64_t r = 0; r < n; ++r) tiles.set_row(r, t.data() + r * k);
  return tiles;
}


// Every one of the 27 triples and 9 pairs, and K split as 6 * floor(K / 6) + rest.
TEST(Tl2Kernel, TilesRoundTripEveryTripleAndSplit) {
  for (int64_t k : {6, 8, 10, 81, 200, 2560}) {
    const int64_t n = 70;
    auto t = random_ternary(n, k, static_cast<uint64_t>(k));
    for (int i = 0; i < 27 && 3 * i + 2 < k; ++i)
      for (int j = 0; j < 3; ++j) t[3 * i + j] = static_cast<int8_t>((j == 0 ? i / 9 : j == 1 ? i / 3 % 3 : i % 3) - 1);
    const TlTiles tiles = make_tiles(t, n, k, true);
    EXPECT_EQ(tiles.three_cols, k / 6 * 6);
    EXPECT_EQ(tiles.tl1_steps, (k % 6 + 3) / 4);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) ASSERT_EQ(tiles.weight(r, c), t[r * k + c]) << "k=" << k << " " << r << "," << c;
  }
}

TEST(Tl1Kernel, TilesRoundTrip) {
  for (int64_t k : {1, 2, 5, 128, 6912}) {
    const int64_t n = 65;
    const auto t = random_ternary(n, k, static_cast<uint64_t>(k) + 1);
    const TlTiles tiles = make_tiles(t, n, k, false);
    EXPECT_EQ(tiles.three_cols, 0);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) ASSERT_EQ(tiles.weight(r, c), t[r * k + c]) << "k=" << k;
  }
}

// Sums of table entries per row, computed from the tables as stored: the
// independent check of the lookups (int16 = low byte | high byte << 8).
std::vector<int32_t> table_sums(const TlTiles& tiles, const std::vector<int8_t>& t, const uint8_t* lut, bool lossless,
                                int64_t row0) {
  std::vector<int32_t> sums(TlTiles::kRows, 0);
  const int64_t table = lossless ? 32 : 16;
  auto entry = [&](int64_t g, int i) {
    return lossless ? static_cast<int16_t>(lut[g * table + i] | (lut[g * table + 16 + i] << 8))
                    : static_cast<int8_t>(lut[g * table + i]);
  };
  const int64_t k = tiles.cols;
  for (int64_t r = 0; r < TlTiles::kRows && row0 + r < tiles.rows; ++r) {
    const int8_t* w = t.data() + (row0 + r) * k;
    for (int64_t g = 0; g < tiles.tl2_groups(); ++g) {
      // Find the entry of the triple or of its mirror.
      for (int i = 0; i < 14; ++i) {
        int c[3];
        tl2_triple_of_index(i, c);
        if (c[0] == w[3 * g] && c[1] == w[3 * g + 1] && c[2] == w[3 * g + 2]) sums[r] += entry(g, i);
        if (i > 0 && -c[0] == w[3 * g] && -c[1] == w[3 * g + 1] && -c[2] == w[3 * g + 2]) sums[r] -= entry(g, i);
      }
    }
    for (int64_t p = 0; p < tiles.tl1_groups(); ++p) {
      const int64_t c0 = tiles.three_cols + 2 * p;
      const int w0 = c0 < k ? w[c0] : 0, w1 = c0 + 1 < k ? w[c0 + 1] : 0;
      sums[r] += entry(tiles.tl2_groups() + p, 3 * (w0 + 1) + (w1 + 1));
    }
  }
  return sums;
}

// The integer core at every ISA level with any int8 activations, -128 included:
// lossless sums equal the exact dot; int8-table sums equal the sums of the
// rounded entries, and unit * sum is within the documented bound of the dot.
TEST(Tl2Kernel, TileDotsAtEveryIsa) {
  Rng rng(3);
  for (bool triples : {false, true})
    for (int64_t k : {4, 10, 128, 200, 2560, 6912}) {
      const int64_t n = 64;
      const auto t = random_ternary(n, k, static_cast<uint64_t>(k) * 3 + triples);
      const TlTiles tiles = make_tiles(t, n, k, triples);
      for (int pattern = 0; pattern < 4; ++pattern) {
        std::vector<int8_t> q(static_cast<size_t>((k + 63) / 64 * 64), 0);
        for (int64_t i = 0; i < k; ++i) {
          int8_t v = static_cast<int8_t>(rng.next_u32());
          if (pattern == 1) v = -128;
          if (pattern == 2) v = 127;
          if (pattern == 3) v = i % 2 ? 127 : -128;
          q[i] = v;
        }
        for (bool lossless : {true, false}) {
          std::vector<uint8_t> lut(static_cast<size_t>(tl_lut_bytes(tiles, lossless)));
          const float unit = tl_lut_unit(tiles, lossless, q.data());
          build_tl_luts(tiles, lossless, unit, q.data(), 0, tl_lut_groups(tiles), lut.data());
          const auto expect = table_sums(tiles, t, lut.data(), lossless, 0);
          const int64_t groups = tiles.tl2_groups() + tiles.tl1_groups();
          for (const auto& isa : tl_isa_variants()) {
            std::vector<int32_t> out(64, 12345);
            tile_dots_for(isa.name, lossless)({tiles.tile(0), tiles.tl2_steps, tiles.tl1_steps, tiles.sign_offset(),
                                               tiles.tl1_offset(), lut.data(), out.data()});
            for (int r = 0; r < n; ++r) {
              const int32_t dot = ternary_dot(t.data() + r * k, q.data(), k);
              const std::string where = isa.name + (triples ? " tl2" : " tl1") + (lossless ? "_1" : "_0") +
                                        " k=" + std::to_string(k) + " pattern=" + std::to_string(pattern) +
                                        " row=" + std::to_string(r);
              ASSERT_EQ(out[r], expect[r]) << where;
              if (lossless) {
                ASSERT_EQ(out[r], dot) << where;
              } else {
                ASSERT_LE(std::abs(unit * out[r] - dot), groups * unit / 2 * (1 + 1e-5)) << where;
              }
            }
          }
        }
      }
    }
}

#if LOWBIT_X86_KERNELS  // NEON builds its tables with build_tl_luts itself
TEST(Tl2Kernel, TableBuilderMatchesScalarDefinition) {
  if (!cpu_features().has_avx2_level()) GTEST_SKIP() << "needs AVX2";
  Rng rng(5);
  for (bool triples : {false, true})
    for (int64_t k : {1, 5, 6, 128, 200, 2560, 6913}) {
      const TlTiles tiles(1, k, triples);
      std::vector<int8_t> q(static_cast<size_t>((k + 63) / 64 * 64), 0);
      for (int64_t i = 0; i < k; ++i) q[i] = static_cast<int8_t>(i % 7 == 0 ? -128 : rng.next_u32());
      for (bool lossless : {true, false}) {
        const float unit = tl_lut_unit(tiles, lossless, q.data());
        const int64_t groups = tl_lut_groups(tiles);
        std::vector<uint8_t> expect(static_cast<size_t>(tl_lut_bytes(tiles, lossless)), 1);
        std::vector<uint8_t> got(expect.size(), 2);
        build_tl_luts(tiles, lossless, unit, q.data(), 0, groups, expect.data());
        build_tl_luts_avx2({q.data(), k, tiles.three_cols, tiles.tl2_groups(), lossless, unit, 0, groups, got.data()});
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_EQ(got[i], expect[i]) << "k=" << k << (triples ? " tl2" : " tl1") << (lossless ? "_1" : "_0")
                                       << " byte " << i;
      }
    }
}
#endif

struct Shape {
  int64_t n, k, tokens;
};

const char* const kLossless[] = {"tl1_1", "tl2_1"};
const char* const kLossy[] = {"tl1_0", "tl2_0"};

// Lossless variants: bitwise the ref's y, odd shapes and the 2B-4T matrices.
TEST(Tl2Kernel, LosslessMatchesReferenceBitwiseAtEveryIsa) {
  ThreadPool pool(2);
  const std::vector<Shape> shapes = {{1, 128, 1},    {17, 128, 3},   {70, 384, 5},   {130, 640, 13},
                                     {2560, 2560, 1}, {640, 2560, 2}, {6912, 2560, 1}, {2560, 6912, 1}};
  for (const Shape& s : shapes) {
    const auto t = random_ternary(s.n, s.k, static_cast<uint64_t>(s.n * 7 + s.k));
    const auto bytes = encode_ternary(GgmlType::I2_S, t, s.n, s.k, 1.375f);
    const WeightView w{"blk.1.test", GgmlType::I2_S, s.n, s.k, bytes.data()};
    const auto x = random_activations(s.tokens, s.k, static_cast<uint64_t>(s.k));
    const auto expect = run_matmul(*make_reference_matmul(w), x, s.tokens, pool);
    for (const char* kernel : kLossless)
      for (const auto& isa : tl_isa_variants()) {
        const auto m = make_matmul(w, kernel, pool, isa.cpu);
        ASSERT_EQ(m->kernel_name(), std::string(kernel) + "/" + isa_suffix(isa.name));
        const auto y = run_matmul(*m, x, s.tokens, pool);
        for (size_t i = 0; i < y.size(); ++i)
          ASSERT_EQ(float_to_bits(y[i]), float_to_bits(expect[i]))
              << kernel << " " << isa.name << " " << s.n << "x" << s.k << " at " << i;
      }
  }
}

// Int8 tables: within the documented bound (docs/kernels.md): per token,
// |dot_0 - dot| <= groups * unit / 2, so |y_0 - y| <= that * scale / act_scale
// (plus float rounding).
TEST(Tl2Kernel, Int8TablesWithinBound) {
  ThreadPool pool(2);
  for (const Shape& s : std::vector<Shape>{{40, 256, 3}, {640, 2560, 1}, {100, 6912, 2}}) {
    const float scale = 0.7f;
    const auto t = random_ternary(s.n, s.k, 77);
    const auto bytes = encode_ternary(GgmlType::I2_S, t, s.n, s.k, scale);
    const WeightView w{"lossy", GgmlType::I2_S, s.n, s.k, bytes.data()};
    const auto x = random_activations(s.tokens, s.k, 78);
    ActivationBatch in(s.tokens, s.k);
    in.set(x.data(), s.tokens, s.k);
    in.quantize(pool);
    const auto exact = run_matmul(*make_reference_matmul(w), x, s.tokens, pool);
    for (const char* kernel : kLossy)
      for (const auto& isa : tl_isa_variants()) {
        const auto m = make_matmul(w, kernel, pool, isa.cpu);
        ASSERT_EQ(m->kernel_name(), std::string(kernel) + "/" + isa_suffix(isa.name));
        const bool triples = std::string(kernel) == "tl2_0";
        const TlTiles shape(1, s.k, triples);
        const int64_t groups = shape.tl2_groups() + shape.tl1_groups();
        const auto y = run_matmul(*m, x, s.tokens, pool);
        double worst = 0;
        for (int64_t tk = 0; tk < s.tokens; ++tk) {
          const int8_t* q = in.q() + tk * in.k_padded();
          int largest = 0;  // the table unit, recomputed
          for (int64_t g = 0; g < shape.tl2_groups(); ++g)
            largest = std::max(largest, std::abs(q[3 * g]) + std::abs(q[3 * g + 1]) + std::abs(q[3 * g + 2]));
          for (int64_t p = 0; p < shape.tl1_groups(); ++p) {
            const int64_t c = shape.three_cols + 2 * p;
            largest = std::max(largest, (c < s.k ? std::abs(q[c]) : 0) + (c + 1 < s.k ? std::abs(q[c + 1]) : 0));
          }
          const double unit = largest / 127.0;
          const double bound = groups * unit / 2 * scale / in.scale()[tk];
          for (int64_t r = 0; r < s.n; ++r) {
            const size_t i = static_cast<size_t>(tk * s.n + r);
            const double err = std::abs(static_cast<double>(y[i]) - exact[i]);
            worst = std::max(worst, err / bound);
            ASSERT_LE(err, bound * 1.001 + 1e-5 * std::abs(exact[i])) << kernel << " " << isa.name << " row " << r;
          }
        }
        EXPECT_GT(worst, 0) << kernel << ": int8 tables were exact, the test proves nothing";
      }
  }
}

// F16 ternary with a K of no block size, TQ1_0/TQ2_0 with one d: forced only for F16.
TEST(Tl1Kernel, OtherTernaryFormats) {
  ThreadPool pool(2);
  const int64_t n = 45, tokens = 2;
  for (GgmlType type : {GgmlType::F16, GgmlType::TQ1_0, GgmlType::TQ2_0}) {
    const int64_t k = type == GgmlType::F16 ? 101 : 512;
    const float s = 0.25f;  // exact in fp16
    const auto t = random_ternary(n, k, 21);
    const auto bytes = encode_ternary(type, t, n, k, s);
    const WeightView w{"fmt", type, n, k, bytes.data()};
    const auto x = random_activations(tokens, k, 22);
    ActivationBatch in(tokens, k);
    in.set(x.data(), tokens, k);
    in.quantize(pool);
    for (const char* kernel : {"tl1_1", "tl2_1"})
      for (const auto& isa : tl_isa_variants()) {
        const auto m = make_matmul(w, kernel, pool, isa.cpu);
        ASSERT_EQ(m->kernel_name().substr(0, 5), kernel) << ggml_type_name(type);
        const auto y = run_matmul(*m, x, tokens, pool);
        for (int64_t tk = 0; tk < tokens; ++tk)
          for (int64_t r = 0; r < n; ++r)
            ASSERT_EQ(y[tk * n + r],
                      static_cast<float>(ternary_dot(t.data() + r * k, in.q() + tk * in.k_padded(), k)) *
                          (s / in.scale()[tk]))
                << kernel << " " << ggml_type_name(type) << " row " << r;
      }
  }
}

TEST(Tl2Kernel, ShortNamesAreTheLosslessVariants) {
  const auto t = random_ternary(64, 256, 2);
  const auto bytes = encode_ternary(GgmlType::I2_S, t, 64, 256, 1.0f);
  ThreadPool pool(1);
  const WeightView w{"w", GgmlType::I2_S, 64, 256, bytes.data()};
  EXPECT_EQ(make_matmul(w, "tl1", pool)->kernel_name().substr(0, 6), "tl1_1/");
  EXPECT_EQ(make_matmul(w, "tl2", pool)->kernel_name().substr(0, 6), "tl2_1/");
}

TEST(Tl2Kernel, AutoNeverPicksInt8Tables) {
  const auto t = random_ternary(64, 256, 2);
  const auto bytes = encode_ternary(GgmlType::I2_S, t, 64, 256, 1.0f);
  ThreadPool pool(1);
  const std::string chosen = make_matmul({"w", GgmlType::I2_S, 64, 256, bytes.data()}, "auto", pool)->kernel_name();
  EXPECT_EQ(chosen.find("_0"), std::string::npos) << chosen;
}

}  // namespace
}  // namespace lowbit
