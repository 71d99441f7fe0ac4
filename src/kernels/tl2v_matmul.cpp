// The "tl2v" kernel family: ternary weights in Tl2vTiles (TL2's 5 bits per 3
// weights), up-converted to codes and dotted with int8 activations by
// vpdpbusd; lossless like i2s, with a sixth fewer weight bytes to read.
#include "kernels/tl2v_matmul.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/spanned_tiles.h"
#include "kernels/ternary_matmul.h"
#include "kernels/ternary_weights.h"
#include "kernels/tl2v_tile_dots.h"
#include "kernels/tl2v_tiles.h"

namespace lowbit {

namespace {

bool cpu_runs_tl2v(const CpuFeatures& cpu) { return cpu.has_avx512_level() && cpu.avx512vbmi; }

// Rows longer than this many blocks (4032 columns) are split into spans of at
// most this many (TernaryMatmul::forward_spans): a down matrix of K = 6912 in
// 2. The activations of one span then stay under 4 KB; with 2 spans the down
// matrices took 14-15% less time at 1 thread (docs/performance.md).
constexpr int64_t kBlockColumns = Tl2vTiles::kBlockColumns, kMaxSpanBlocks = 42;

class Tl2vMatmul final : public TernaryMatmul {
 public:
  Tl2vMatmul(const WeightView& w, const TernaryScale& s, const CpuFeatures& cpu, ThreadPool& pool)
      : TernaryMatmul(w, cpu.avx512vnni ? "tl2v/avx512-vbmi-vnni" : "tl2v/avx512-vbmi", s.scale,
                      kTl2vTilesPerCall * Tl2vTiles::kRows, kTl2vMaxTokens),
        dots_(tl2v_tile_dots_avx512(cpu.avx512vnni, cpu.vendor_amd)),
        tiles_(w.rows, w.cols, kBlockColumns, kMaxSpanBlocks) {
    for_each_ternary_row(w, s, pool, Tl2vTiles::kRows, [&](int64_t r, const int8_t* t) { tiles_.set_row(r, t); });
  }

  int64_t weight_bytes() const override { return tiles_.bytes(); }

 protected:
  int spans() const override { return tiles_.count(); }
  // A matmul tile is kTl2vTilesPerCall tiles of Tl2vTiles (the last may have fewer).
  void tile_dots(int64_t tile, int span, const ActivationBatch& in, int64_t t0, int tokens,
                 int32_t* dots) const override {
    const Tl2vTiles& s = tiles_.spans[span];
    const int64_t first = tile * kTl2vTilesPerCall;
    const int tiles = static_cast<int>(std::min<int64_t>(kTl2vTilesPerCall, s.tiles - first));
    dots_(s.tile(first), s.tile_bytes, tiles, s.blocks, s.tail_lines,
          in.q() + t0 * in.k_padded() + tiles_.starts[span], in.k_padded(), tokens, dots);
  }
  bool dots_of_codes() const override { return true; }

 private:
  Tl2vTileDots dots_;
  SpannedTiles<Tl2vTiles> tiles_;
};

}  // namespace

int tl2v_score(const WeightView& w, const CpuFeatures& cpu) {
  if (!cpu_runs_tl2v(cpu)) return 0;
  if (!ternary_scale(w)) return 0;  // I2_S, TQ1_0, TQ2_0 or F16 holding one scale
  if (w.type == GgmlType::F16) return -1;  // F16 models are computed in float unless forced
  // Ahead of i2s (30) with VNNI: same dot products over a sixth fewer bytes,
  // 1.12-1.28x i2s on cold decode-step matrices (docs/performance.md). Without
  // VNNI its extra decode work was not measured against i2s: i2s stays first.
  return cpu.avx512vnni ? 35 : 25;
}

std::unique_ptr<Matmul> tl2v_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  const auto s = ternary_scale(w);
  if (!s || !cpu_runs_tl2v(cpu))
    fail("tensor ", w.name, ": kernel tl2v cannot multiply ", ggml_type_name(w.type), " ", w.rows, " x ", w.cols,
         " on this CPU (needs ternary weights with one scale, and AVX-512 VBMI)");
  return std::make_unique<Tl2vMatmul>(w, *s, cpu, pool);
}

}  // namespace lowbit
