// The "tl2v" kernel family: ternary weights in Tl2vTiles (TL2's 5 bits per 3
// weights), up-converted to codes and dotted with int8 activations by
// vpdpbusd; lossless like i2s, with a sixth fewer weight bytes to read.
#include "kernels/tl2v_matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
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
constexpr int64_t kMaxSpanBlocks = 42;

// The column ranges of a row's spans: whole blocks, balanced; the last holds the I2S tail.
std::vector<int64_t> span_starts(int64_t cols) {
  const int64_t blocks = cols / Tl2vTiles::kBlockColumns;
  const int64_t wanted = std::max<int64_t>(1, (blocks + kMaxSpanBlocks - 1) / kMaxSpanBlocks);
  const int64_t span_blocks = std::max<int64_t>(1, (blocks + wanted - 1) / wanted);
  std::vector<int64_t> starts{0};
  for (int64_t b = span_blocks; b < blocks; b += span_blocks) starts.push_back(b * Tl2vTiles::kBlockColumns);
  return starts;
}

class Tl2vMatmul final : public TernaryMatmul {
 public:
  Tl2vMatmul(const WeightView& w, const TernaryScale& s, const CpuFeatures& cpu, ThreadPool& pool,
             const std::vector<int64_t>& starts)
      : TernaryMatmul(w, cpu.avx512vnni ? "tl2v/avx512-vbmi-vnni" : "tl2v/avx512-vbmi", s.scale, Tl2vTiles::kRows,
                      kTl2vMaxTokens, static_cast<int>(starts.size())),
        dots_(tl2v_tile_dots_avx512(cpu.avx512vnni)),
        starts_(starts) {
    spans_.reserve(starts.size());
    for (size_t i = 0; i < starts.size(); ++i)
      spans_.emplace_back(w.rows, (i + 1 < starts.size() ? starts[i + 1] : w.cols) - starts[i]);
    for_each_ternary_row(w, s, pool, Tl2vTiles::kRows, [&](int64_t r, const int8_t* t) {
      for (size_t i = 0; i < spans_.size(); ++i) spans_[i].set_row(r, t + starts_[i]);
    });
  }

  int64_t weight_bytes() const override {
    int64_t bytes = 0;
    for (const auto& s : spans_) bytes += s.bytes();
    return bytes;
  }

 protected:
  void tile_dots(int64_t tile, int span, const ActivationBatch& in, int64_t t0, int tokens,
                 int32_t* dots) const override {
    const Tl2vTiles& s = spans_[span];
    dots_(s.tile(tile), s.blocks, s.tail_lines, in.q() + t0 * in.k_padded() + starts_[span], in.k_padded(), tokens,
          dots);
    if (span == 0) remove_code_offset(in, t0, tokens, dots);  // once per row: the spans' dots add up
  }

 private:
  Tl2vTileDots dots_;
  std::vector<int64_t> starts_;   // first column of each span
  std::vector<Tl2vTiles> spans_;  // span-major: each span's tiles, one buffer per span
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
  return std::make_unique<Tl2vMatmul>(w, *s, cpu, pool, span_starts(w.cols));
}

}  // namespace lowbit
