#include "kernels/tl_matmul.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/ternary_matmul.h"
#include "kernels/ternary_weights.h"
#include "kernels/tl_luts.h"
#include "kernels/tl_tile_dots.h"
#include "kernels/tl_tiles.h"

namespace lowbit {

namespace {

// A token's tables are built once and read by every tile; 4 tokens per call
// keep a tile's indices in L1/L2 while they are looked up for each token.
constexpr int kTlMaxTokens = 4;
constexpr int64_t kGroupsPerChunk = 512;  // of table building

struct TlVariant {
  const char* name;
  bool triples;   // TL2 (else TL1)
  bool lossless;  // int16 tables (else int8)
};

// The ISA the TL kernels run at on a CPU: "avx512", "avx2" or "neon"; nullptr
// where none (the tile dots are ISA code: tl_tile_dots.h).
const char* tl_isa(const CpuFeatures& cpu) {
#if LOWBIT_X86_KERNELS
  if (cpu.has_avx2_level()) return cpu.has_avx512_level() ? "avx512" : "avx2";
#endif
#if LOWBIT_NEON_KERNELS
  if (cpu.has_neon_level()) return "neon";
#endif
  (void)cpu;
  return nullptr;
}

TlTileDots tl_tile_dots_for(const CpuFeatures& cpu, bool lossless) {
#if LOWBIT_X86_KERNELS
  return cpu.has_avx512_level() ? tl_tile_dots_avx512(lossless) : tl_tile_dots_avx2(lossless);
#elif LOWBIT_NEON_KERNELS
  (void)cpu;
  return tl_tile_dots_neon(lossless);
#else
  (void)cpu;
  (void)lossless;
  return nullptr;
#endif
}

class TlMatmul final : public TernaryMatmul {
 public:
  TlMatmul(const WeightView& w, const TernaryScale& s, const CpuFeatures& cpu, ThreadPool& pool, const TlVariant& v)
      : TernaryMatmul(w, std::string(v.name) + "/" + tl_isa(cpu), s.scale, TlTiles::kRows, kTlMaxTokens),
        tiles_(w.rows, w.cols, v.triples),
        lossless_(v.lossless),
        lut_bytes_(tl_lut_bytes(tiles_, v.lossless)),
        dots_(tl_tile_dots_for(cpu, v.lossless)) {
    for_each_ternary_row(w, s, pool, TlTiles::kRows, [&](int64_t r, const int8_t* t) { tiles_.set_row(r, t); });
  }

  int64_t weight_bytes() const override { return tiles_.bytes(); }

 protected:
  void prepare(const ActivationBatch& in, ThreadPool& pool) const override {
    const size_t need = static_cast<size_t>(in.tokens() * lut_bytes_);
    if (luts_.size() < need) luts_ = AlignedBuffer<uint8_t>(need);  // grows with the batch, then stays
    if (units_.size() < static_cast<size_t>(in.tokens())) units_.resize(static_cast<size_t>(in.tokens()));
    for (int64_t t = 0; t < in.tokens(); ++t) units_[t] = tl_lut_unit(tiles_, lossless_, in.q() + t * in.k_padded());
    // Split each token's groups too: a single token's tables are built by all threads.
    const int64_t groups = tl_lut_groups(tiles_);
    const int64_t chunks = (groups + kGroupsPerChunk - 1) / kGroupsPerChunk;
    pool.parallel_for(in.tokens() * chunks, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t t = i / chunks, g0 = i % chunks * kGroupsPerChunk, g1 = std::min(groups, g0 + kGroupsPerChunk);
#if LOWBIT_X86_KERNELS
        build_tl_luts_avx2({in.q() + t * in.k_padded(), tiles_.cols, tiles_.three_cols, tiles_.tl2_groups(), lossless_,
                            units_[t], g0, g1, luts_.data() + t * lut_bytes_});
#else  // NEON: the portable builder (the same bytes; not vectorized yet)
        build_tl_luts(tiles_, lossless_, units_[t], in.q() + t * in.k_padded(), g0, g1, luts_.data() + t * lut_bytes_);
#endif
      }
    });
  }

  void tile_dots(int64_t tile, int /*span*/, const ActivationBatch& in, int64_t t0, int tokens,
                 int32_t* dots) const override {
    for (int t = 0; t < tokens; ++t)
      dots_({tiles_.tile(tile), tiles_.tl2_steps, tiles_.tl1_steps, tiles_.sign_offset(), tiles_.tl1_offset(),
             luts_.data() + (t0 + t) * lut_bytes_, dots + t * TlTiles::kRows});
  }

  float dot_unit(int64_t token) const override { return units_[token]; }

 private:
  TlTiles tiles_;
  bool lossless_;
  int64_t lut_bytes_;
  TlTileDots dots_;
  // Per-forward scratch: forward() of one matrix is not run concurrently.
  mutable AlignedBuffer<uint8_t> luts_;  // [tokens][lut_bytes_]
  mutable std::vector<float> units_;     // [tokens]
};

// Auto prefers tl2v (35) or i2s (30 / 20) where they run; TL2's lookups come
// next; the int8-table variants are approximations and never auto-picked.
template <bool kTriples, bool kLossless>
int tl_score(const WeightView& w, const CpuFeatures& cpu) {
  if (tl_isa(cpu) == nullptr) return 0;
  if (!ternary_scale(w)) return 0;  // I2_S, TQ1_0, TQ2_0 or F16 holding one scale
  if (w.type == GgmlType::F16 || !kLossless) return -1;
  return kTriples ? 15 : 10;
}

template <bool kTriples, bool kLossless>
std::unique_ptr<Matmul> tl_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  static constexpr TlVariant v{kTriples ? (kLossless ? "tl2_1" : "tl2_0") : (kLossless ? "tl1_1" : "tl1_0"), kTriples,
                               kLossless};
  const auto s = ternary_scale(w);
  if (!s || tl_isa(cpu) == nullptr)
    fail("tensor ", w.name, ": kernel ", v.name, " cannot multiply ", ggml_type_name(w.type), " ", w.rows, " x ",
         w.cols, " on this CPU (needs ternary weights with one scale, and AVX2 or NEON dotprod)");
  return std::make_unique<TlMatmul>(w, *s, cpu, pool, v);
}

}  // namespace

std::vector<KernelFamily> tl_kernel_families() {
  return {
      {"tl1_0", "TL1 lookup tables, 2 weights per 4-bit index, int8 tables (approximate)", tl_score<false, false>,
       tl_make<false, false>, /*lossless=*/false},
      {"tl1_1", "TL1 lookup tables, 2 weights per 4-bit index, int16 tables, lossless", tl_score<false, true>,
       tl_make<false, true>},
      {"tl2_0", "TL2 lookup tables, 3 weights per sign + 4-bit index (1.67 bpw), int8 tables (approximate)",
       tl_score<true, false>, tl_make<true, false>, /*lossless=*/false},
      {"tl2_1", "TL2 lookup tables, 3 weights per sign + 4-bit index (1.67 bpw), int16 tables, lossless",
       tl_score<true, true>, tl_make<true, true>},
      {"tl1", "same as tl1_1", tl_score<false, true>, tl_make<false, true>},
      {"tl2", "same as tl2_1", tl_score<true, true>, tl_make<true, true>},
  };
}

}  // namespace lowbit
