// The "i2s" kernel family: ternary weights in I2sTiles, dotted with int8
// activations by vpdpbusd (or vpmaddubsw), lossless like bitnet.cpp's I2_S.
#include "kernels/i2s_matmul.h"

#include "core/error.h"
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
};

I2sIsa pick_isa(const CpuFeatures& cpu) {
  if (cpu.has_avx512_level())
    return cpu.avx512vnni ? I2sIsa{"avx512-vnni", i2s_tile_dots_avx512(true)}
                          : I2sIsa{"avx512", i2s_tile_dots_avx512(false)};
  return cpu.avx_vnni ? I2sIsa{"avx2-vnni", i2s_tile_dots_avx2(true)} : I2sIsa{"avx2", i2s_tile_dots_avx2(false)};
}

// Rows longer than this many 16-column lines (4032 columns) are split into
// spans (TernaryMatmul::forward_spans), as tl2v's are: on the 2B-4T down
// matrices 9% more weights per second with AVX-512, 3-4% with AVX2
// (docs/performance.md).
constexpr int64_t kLineColumns = 16, kMaxSpanLines = 252;

class I2sMatmul final : public TernaryMatmul {
 public:
  I2sMatmul(const WeightView& w, const TernaryScale& s, const CpuFeatures& cpu, ThreadPool& pool)
      : TernaryMatmul(w, std::string("i2s/") + pick_isa(cpu).name, s.scale, I2sTiles::kRows, kI2sMaxTokens),
        dots_(pick_isa(cpu).dots),
        tiles_(w.rows, w.cols, kLineColumns, kMaxSpanLines) {
    for_each_ternary_row(w, s, pool, I2sTiles::kRows, [&](int64_t r, const int8_t* t) { tiles_.set_row(r, t); });
  }

  int64_t weight_bytes() const override { return tiles_.bytes(); }

 protected:
  int spans() const override { return tiles_.count(); }
  void tile_dots(int64_t tile, int span, const ActivationBatch& in, int64_t t0, int tokens,
                 int32_t* dots) const override {
    const I2sTiles& s = tiles_.spans[span];
    dots_(s.tile(tile), s.groups, in.q() + t0 * in.k_padded() + tiles_.starts[span], in.k_padded(), tokens, dots);
  }
  bool dots_of_codes() const override { return true; }

 private:
  I2sTileDots dots_;
  SpannedTiles<I2sTiles> tiles_;
};

}  // namespace

int i2s_score(const WeightView& w, const CpuFeatures& cpu) {
  if (!cpu.has_avx2_level()) return 0;
  if (!ternary_scale(w)) return 0;  // I2_S, TQ1_0, TQ2_0 or F16 holding one scale
  if (w.type == GgmlType::F16) return -1;  // F16 models are computed in float unless forced
  return cpu.has_avx512_level() ? 30 : 20;
}

std::unique_ptr<Matmul> i2s_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  const auto s = ternary_scale(w);
  if (!s || !cpu.has_avx2_level())
    fail("tensor ", w.name, ": kernel i2s cannot multiply ", ggml_type_name(w.type), " ", w.rows, " x ", w.cols,
         " on this CPU (needs ternary weights with one scale, and AVX2)");
  return std::make_unique<I2sMatmul>(w, *s, cpu, pool);
}

}  // namespace lowbit
