// The "i2s" kernel family: ternary weights in I2sTiles, dotted with int8
// activations by vpdpbusd (or vpmaddubsw), lossless like bitnet.cpp's I2_S.
#include "kernels/i2s_matmul.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/i2s_amx_gemm.h"
#include "kernels/i2s_lut_gemm.h"
#include "kernels/i2s_tile_dots.h"
#include "kernels/i2s_tiles.h"
#include "kernels/spanned_tiles.h"
#include "kernels/ternary_matmul.h"
#include "kernels/ternary_weights.h"

namespace lowbit {

namespace {

struct I2sIsa {
  const char* name;
  I2sTileDots dots;
  I2sPairDots pair = nullptr;  // one token, two tiles far apart side by side
  I2sPairTokenDots pair_tokens = nullptr;  // the same for 2 to kI2sMaxPairTokens tokens
  bool lut = false;            // many tokens by table lookup (i2s_lut_gemm.h)
  bool amx = false;            // many tokens by AMX tile dot products (i2s_amx_gemm.h)
};

// Pairs on plain AVX2, AMD only: measured on a Zen 3 (docs/performance.md
// "Session 15"), where one thread read one stream at 60-65% of the probe's
// four. With AVX-512, Intel only (with the software prefetch; "Session 24"):
// as for int2, two streams a region apart kept more loads in flight there.
I2sIsa pick_isa(const CpuFeatures& cpu) {
#if LOWBIT_X86_KERNELS
  if (cpu.has_avx512_level()) {
    const bool vnni = cpu.avx512vnni, intel = !cpu.vendor_amd;
    const I2sPairDots pair = intel ? i2s_pair_dots_avx512(vnni) : nullptr;
    const I2sPairTokenDots pair_tokens = intel ? i2s_pair_token_dots_avx512(vnni) : nullptr;
    if (vnni && cpu.amx_int8)
      return I2sIsa{"avx512-vnni-amx", i2s_tile_dots_avx512(true, intel), pair, pair_tokens, false, true};
    return vnni ? I2sIsa{"avx512-vnni", i2s_tile_dots_avx512(true, intel), pair, pair_tokens}
                : I2sIsa{"avx512", i2s_tile_dots_avx512(false, intel), pair, pair_tokens};
  }
  if (cpu.avx_vnni) return I2sIsa{"avx2-vnni", i2s_tile_dots_avx2(true)};
  if (cpu.has_avx2_level())
    return cpu.vendor_amd ? I2sIsa{"avx2-pairs", i2s_tile_dots_avx2(false), i2s_pair_dots_avx2(false), nullptr, true}
                          : I2sIsa{"avx2", i2s_tile_dots_avx2(false), nullptr, nullptr, true};
#endif
#if LOWBIT_NEON_KERNELS
  if (cpu.has_neon_level()) return I2sIsa{"neon-dotprod", i2s_tile_dots_neon()};
#endif
  return I2sIsa{"none", nullptr};
}

bool cpu_runs_i2s(const CpuFeatures& cpu) { return pick_isa(cpu).dots != nullptr; }

// Plain AVX2 takes blocks of 16 tokens by table lookup: on an AVX2-only Zen 3
// it ran 1.5x the multiply-adds per second of the vpmaddubsw tile dots
// (docs/kernels.md "Prefill by table lookup"). Each call first derives its
// indices from all its weights, a cost the tile dots do not have, and a block
// costs as much for 1 token as for 16: pp16 ran 1.10-1.15x the tile dots' speed,
// pp14 as one block 1.01-1.04x, pp12 0.87x, pp8 0.62x. A last block of fewer than
// 8 tokens goes to the tile dots, which read the weights once more (16 + 8 as
// two blocks ran as fast as the tile dots alone).
constexpr int64_t kLutMinTokens = 16, kLutMinRemainder = 8;

int64_t lut_tokens(int64_t tokens) {
  if (tokens < kLutMinTokens) return 0;
  const int64_t rest = tokens % kI2sLutTokens;
  return rest >= kLutMinRemainder ? tokens : tokens - rest;
}

// AMX takes every token of a call of at least this many (a last partial
// block of 16 zero-padded); fewer go to the tile dots, one pass of up to 8.
// With one token block on three weight tiles at a time (i2s_amx_gemm.h), 7
// and 8 sequences decoding together ran 4-5% and 7-12% faster on AMX's
// part-empty tiles than in one VNNI pass, 5 and 6 some 1-4% slower (Intel
// Xeon, 2 threads; at 1 thread 7 and 8 +6-11%; docs/performance.md
// "Session 36").
constexpr int64_t kAmxMinTokens = 7;

int64_t amx_tokens(int64_t tokens) { return tokens >= kAmxMinTokens ? tokens : 0; }

// Rows longer than this many 16-column lines (4032 columns) are split into
// spans (TernaryMatmul::forward_spans), as tl2v's were: on the 2B-4T down
// matrices 9% more weights per second with AVX-512, 3-4% with AVX2
// (docs/performance.md).
constexpr int64_t kLineColumns = 16, kMaxSpanLines = 252;

class I2sMatmul final : public TernaryMatmul {
 public:
  I2sMatmul(const WeightView& w, const TernaryScale& s, const CpuFeatures& cpu, ThreadPool& pool)
      : TernaryMatmul(w, std::string("i2s/") + pick_isa(cpu).name, s.scale, I2sTiles::kRows, kI2sMaxTokens),
        dots_(pick_isa(cpu).dots),
        pair_(pick_isa(cpu).pair),
        pair_tokens_(pick_isa(cpu).pair_tokens),
        lut_(pick_isa(cpu).lut),
        amx_(pick_isa(cpu).amx),
        tiles_(w.rows, w.cols, kLineColumns, kMaxSpanLines) {
    for_each_ternary_row(w, s, pool, I2sTiles::kRows, [&](int64_t r, const int8_t* t) { tiles_.set_row(r, t); });
    if (amx_) amx_cols_ = i2s_amx_block_columns(tiles_);
  }

  // AMX reads the activations in tile rows, laid out once per batch on the
  // pool (and shared by the matrices of one input, q, k and v).
  void prepare(const ActivationBatch& in, ThreadPool& pool) const override {
    if (amx_ && amx_tokens(in.tokens()) > 0) in.build_tile_rows(amx_cols_, pool);
  }

  int64_t weight_bytes() const override { return tiles_.bytes(); }

  bool wants_one_range_per_thread(const ActivationBatch& in) const override { return uses_gemm(in.tokens()); }
  void forward_units(const ActivationBatch& in, float* y, int64_t begin, int64_t end) const override {
    const int64_t n = lut_ ? lut_tokens(in.tokens()) : amx_ ? amx_tokens(in.tokens()) : 0;
#if LOWBIT_X86_KERNELS
    // The lookup GEMM gives signed dots, AMX the dots of the codes t + 1.
    if (n > 0 && lut_)
      i2s_lut_gemm_avx2(tiles_, cols_, begin, end, in.q(), in.k_padded(), n,
                        [&](int64_t tile, int64_t t0, int tokens, const int32_t* dots) {
                          write_rows(tile, in, t0, tokens, dots, y, /*codes=*/false);
                        });
    if (n > 0 && amx_)
      i2s_amx_gemm(tiles_, begin, end, in.tile_rows(amx_cols_), n,
                   [&](int64_t tile, int64_t t0, int tokens, const int32_t* dots) {
                     const int64_t r0 = tile * I2sTiles::kRows;
                     const int rows = static_cast<int>(std::min<int64_t>(I2sTiles::kRows, rows_ - r0));
                     i2s_amx_write_rows(dots, tokens, rows, in.sum() + t0, in.scale() + t0, weight_scale(),
                                        y + t0 * rows_ + r0, rows_);
                   });
#endif
    forward_tokens(in, y, begin, end, n);
  }

  // Same width, so the same spans. Up to kI2sMaxPairTokens tokens too where
  // the ISA has the form (AVX-512 on Intel): 2, 3 and 4 sequences decoding
  // together ran 8-11% faster at 2 threads, their matrices having read one
  // stream per core at 62-69% of the read bandwidth, 5-8 sequences 3-8%
  // (docs/performance.md "Session 31", "Session 32").
  // The prefill GEMMs (AMX, lookup) take their token counts whole instead.
  bool pairs_with(const Matmul& other, int64_t tokens) const override {
    const auto* o = dynamic_cast<const I2sMatmul*>(&other);
    if (o == nullptr || o->cols() != cols_ || o->pair_ != pair_ || o->pair_tokens_ != pair_tokens_) return false;
    if (tokens == 1) return pair_ != nullptr;
    return pair_tokens_ != nullptr && tokens <= kI2sMaxPairTokens && !uses_gemm(tokens) && !o->uses_gemm(tokens);
  }
  void forward_pair(const Matmul& other, const ActivationBatch& in, float* y, float* y_other, int64_t tile,
                    int64_t other_tile) const override {
    const auto& o = static_cast<const I2sMatmul&>(other);
    const int n = static_cast<int>(in.tokens()), per = n * I2sTiles::kRows;  // one tile's dots
    int32_t sums[2 * kI2sMaxPairTokens * I2sTiles::kRows], dots[2 * kI2sMaxPairTokens * I2sTiles::kRows];
    for (int span = 0; span < tiles_.count(); ++span) {
      const I2sTiles& a = tiles_.spans[static_cast<size_t>(span)];
      const I2sTiles& b = o.tiles_.spans[static_cast<size_t>(span)];
      const int8_t* q = in.q() + tiles_.starts[static_cast<size_t>(span)];
      int32_t* out = span == 0 ? sums : dots;
      if (n == 1) pair_(a.tile(tile), b.tile(other_tile), a.groups, q, out);
      else pair_tokens_(a.tile(tile), b.tile(other_tile), a.groups, q, in.k_padded(), n, out);
      if (span > 0)
        for (int i = 0; i < 2 * per; ++i) sums[i] += dots[i];
    }
    write_rows(tile, in, 0, n, sums, y);
    o.write_rows(other_tile, in, 0, n, sums + per, y_other);
  }

 protected:
  int spans() const override { return tiles_.count(); }
  void tile_dots(int64_t tile, int span, const ActivationBatch& in, int64_t t0, int tokens,
                 int32_t* dots) const override {
    const I2sTiles& s = tiles_.spans[span];
    dots_(s.tile(tile), s.groups, in.q() + t0 * in.k_padded() + tiles_.starts[span], in.k_padded(), tokens, dots);
  }
  bool dots_of_codes() const override { return true; }

 private:
  // Whether `tokens` go through a many-token GEMM (lookup or AMX), which
  // costs a fixed amount per call besides its units.
  bool uses_gemm(int64_t tokens) const {
    return (lut_ && lut_tokens(tokens) > 0) || (amx_ && amx_tokens(tokens) > 0);
  }

  I2sTileDots dots_;
  I2sPairDots pair_;
  I2sPairTokenDots pair_tokens_;
  bool lut_;
  bool amx_;
  SpannedTiles<I2sTiles> tiles_;
  std::vector<int64_t> amx_cols_;  // i2s_amx_block_columns(tiles_), with AMX
};

}  // namespace

int i2s_score(const WeightView& w, const CpuFeatures& cpu) {
  if (!cpu_runs_i2s(cpu)) return 0;
  if (!ternary_scale(w)) return 0;  // I2_S, TQ1_0, TQ2_0 or F16 holding one scale
  if (w.type == GgmlType::F16) return -1;  // F16 models are computed in float unless forced
  return cpu.has_avx512_level() ? 30 : 20;
}

std::unique_ptr<Matmul> i2s_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  const auto s = ternary_scale(w);
  if (!s || !cpu_runs_i2s(cpu))
    fail("tensor ", w.name, ": kernel i2s cannot multiply ", ggml_type_name(w.type), " ", w.rows, " x ", w.cols,
         " on this CPU (needs ternary weights with one scale, and AVX2 or NEON with dotprod)");
  return std::make_unique<I2sMatmul>(w, *s, cpu, pool);
}

}  // namespace lowbit
