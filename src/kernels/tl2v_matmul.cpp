// The "tl2v" kernel family: ternary weights in Tl2vTiles (TL2's 5 bits per 3
// weights), up-converted to codes and dotted with int8 activations by
// vpdpbusd; lossless like i2s, with a sixth fewer weight bytes to read.
#include "kernels/tl2v_matmul.h"

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "kernels/ternary_matmul.h"
#include "kernels/ternary_weights.h"
#include "kernels/tl2v_tile_dots.h"
#include "kernels/tl2v_tiles.h"

namespace lowbit {

namespace {

bool cpu_runs_tl2v(const CpuFeatures& cpu) { return LOWBIT_X86_KERNELS && cpu.has_avx512_level() && cpu.avx512vbmi; }

// Rows of any length stay whole: one tile layout, no spans (i2s splits long
// rows, spanned_tiles.h). Spans had made the 2B-4T down matrices 14-15% faster
// at 1 thread before a region's tiles were read in pairs; since, a pair call
// walked four places at once (two tiles x two spans), and one token ran the
// down matrices (2560 x 6912) 10-20% and llama3-8b's 4096 x 14336 15-20% faster
// with whole rows on Zen 5, 128-token prefill alike (docs/performance.md
// "Session 38").

#if LOWBIT_X86_KERNELS  // the dots are AVX-512 code (tl2v_tile_dots.h)
class Tl2vMatmul final : public TernaryMatmul {
 public:
  Tl2vMatmul(const WeightView& w, const TernaryScale& s, const CpuFeatures& cpu, ThreadPool& pool)
      : TernaryMatmul(w, cpu.avx512vnni ? "tl2v/avx512-vbmi-vnni" : "tl2v/avx512-vbmi", s.scale,
                      kTl2vTilesPerCall * Tl2vTiles::kRows, kTl2vMaxTokens),
        dots_(tl2v_tile_dots_avx512(cpu.avx512vnni, cpu.vendor_amd)),
        pairs_(cpu.vendor_amd ? tl2v_pair_dots_avx512(cpu.avx512vnni, true) : nullptr),
        pair_tokens_(cpu.vendor_amd ? tl2v_pair_token_dots_avx512(cpu.avx512vnni, true) : nullptr),
        tiles_(w.rows, w.cols) {
    for_each_ternary_row(w, s, pool, Tl2vTiles::kRows, [&](int64_t r, const int8_t* t) { tiles_.set_row(r, t); });
  }

  int64_t weight_bytes() const override { return tiles_.bytes(); }

 protected:
  // A matmul tile is kTl2vTilesPerCall tiles of Tl2vTiles (the last may have fewer).
  void tile_dots(int64_t tile, int /*span: always 0*/, const ActivationBatch& in, int64_t t0, int tokens,
                 int32_t* dots) const override {
    const Tl2vTiles& s = tiles_;
    const int64_t first = tile * kTl2vTilesPerCall;
    const int tiles = static_cast<int>(std::min<int64_t>(kTl2vTilesPerCall, s.tiles - first));
    dots_(s.tile(first), s.tile_bytes, tiles, s.blocks, s.tail_lines, in.q() + t0 * in.k_padded(), in.k_padded(),
          tokens, dots);
  }
  bool dots_of_codes() const override { return true; }

 public:
  // Another tl2v matrix with the same columns (so the same blocks), for 1 to
  // kTl2vMaxTokens tokens, where the prefetch is non-temporal (AMD, where
  // pairs were measured: one token, a 2B-4T decode step's matrices 4-9% faster
  // at 2 threads and 8% at 1 in one process, the matmul stages 9-15% faster
  // end to end, docs/performance.md "Session 11"; 2, 4 and 8 sequences
  // decoding together +19%, +21% and +8% at 2 threads on Zen 5, where one
  // stream of two neighbouring tiles had read slower, "Session 38").
  bool pairs_with(const Matmul& other, int64_t tokens) const override {
    const auto* o = dynamic_cast<const Tl2vMatmul*>(&other);
    if (o == nullptr || o->cols() != cols_ || pairs_ == nullptr || o->pairs_ == nullptr) return false;
    return tokens == 1 || (tokens <= kTl2vMaxTokens && pair_tokens_ != nullptr && o->pair_tokens_ != nullptr);
  }
  // Matmul tile ta of this and tb of other: their u-th Tl2vTiles in one pair
  // call where both exist (a matrix's last matmul tile may have one). Each
  // pair call writes its two tiles' rows straight where write_rows reads them,
  // [this matrix's tokens x kOut][the other's], not through per-unit gathering
  // loops: a core has little time to spare beside its loads. A stand-alone
  // copy of the pair loop read 84-94% of a plain read where the matmuls, with
  // the gathering, read 78-89%; without it one token's 2B-4T decode ran
  // 1.2-1.9% faster at 2 threads (paired medians, 3 x 40 rounds; Q8_0 head
  // 1.2%) and 1.5% at 1 (docs/performance.md "Session 40").
  void forward_pair(const Matmul& other, const ActivationBatch& in, float* y, float* y_other, int64_t ta,
                    int64_t tb) const override {
    const auto& o = static_cast<const Tl2vMatmul&>(other);
    constexpr int kRows = Tl2vTiles::kRows, kOut = kTl2vTilesPerCall * kRows;  // dots per token
    const int n = static_cast<int>(in.tokens());
    // Not zeroed (4 KB a call at most, one token's decode included):
    // write_rows reads only rows below the matrix's, and every tile that has
    // them is written.
    alignas(64) int32_t dots[2 * kTl2vMaxTokens * kOut];
    int32_t* const dots_a = dots;
    int32_t* const dots_b = dots + n * kOut;
    const Tl2vTiles& sa = tiles_;
    const Tl2vTiles& sb = o.tiles_;
    for (int u = 0; u < kTl2vTilesPerCall; ++u) {
      const int64_t a = ta * kTl2vTilesPerCall + u, b = tb * kTl2vTilesPerCall + u;
      const bool has_a = a < sa.tiles, has_b = b < sb.tiles;
      if (has_a && has_b) {
        const int64_t b_offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(sb.tile(b)) -
                                                      reinterpret_cast<uintptr_t>(sa.tile(a)));
        int32_t* const out = dots_a + kRows * u;  // tile b's rows land n * kOut on, in dots_b
        if (n == 1) pairs_(sa.tile(a), b_offset, sa.blocks, sa.tail_lines, in.q(), out, n * kOut);
        else pair_tokens_(sa.tile(a), b_offset, sa.blocks, sa.tail_lines, in.q(), in.k_padded(), n, out, n * kOut);
      } else if (has_a || has_b) {  // the one tile's dots, out[t][0..15], into its matrix's place
        alignas(64) int32_t out[kTl2vMaxTokens * kOut];
        const Tl2vTiles& s = has_a ? sa : sb;
        dots_(s.tile(has_a ? a : b), s.tile_bytes, 1, s.blocks, s.tail_lines, in.q(), in.k_padded(), n, out);
        int32_t* const to = has_a ? dots_a : dots_b;
        for (int t = 0; t < n; ++t) std::copy(out + kOut * t, out + kOut * t + kRows, to + kOut * t + kRows * u);
      }
    }
    write_rows(ta, in, 0, n, dots_a, y);
    o.write_rows(tb, in, 0, n, dots_b, y_other);
  }

 private:
  Tl2vTileDots dots_;
  Tl2vPairDots pairs_;
  Tl2vPairTokenDots pair_tokens_;  // 2 to kTl2vMaxTokens tokens (AMD, as pairs_)
  Tl2vTiles tiles_;
};
#endif

}  // namespace

int tl2v_score(const WeightView& w, const CpuFeatures& cpu) {
  if (!cpu_runs_tl2v(cpu)) return 0;
  if (!ternary_scale(w)) return 0;  // I2_S, TQ1_0, TQ2_0 or F16 holding one scale
  if (w.type == GgmlType::F16) return -1;  // F16 models are computed in float unless forced
  // Ahead of i2s (30) with VNNI on AMD: same dot products over a sixth fewer
  // bytes, 1.12-1.28x i2s on cold decode-step matrices on Zen 5
  // (docs/performance.md). Not on Intel: there 512-bit work issues on two
  // ports, not four, and its permutes on one, so its decode work outweighs the
  // bytes saved; an Intel Xeon decoded 2B-4T 3-8% faster with i2s (software
  // prefetch, "Session 24"). Without VNNI its extra decode work was not
  // measured against i2s: i2s stays first.
  return cpu.avx512vnni && cpu.vendor_amd ? 35 : 25;
}

std::unique_ptr<Matmul> tl2v_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  const auto s = ternary_scale(w);
  if (!s || !cpu_runs_tl2v(cpu))
    fail("tensor ", w.name, ": kernel tl2v cannot multiply ", ggml_type_name(w.type), " ", w.rows, " x ", w.cols,
         " on this CPU (needs ternary weights with one scale, and AVX-512 VBMI)");
#if LOWBIT_X86_KERNELS
  return std::make_unique<Tl2vMatmul>(w, *s, cpu, pool);
#else
  fail("kernel tl2v is AVX-512 code, not built here");
#endif
}

}  // namespace lowbit
