#include "kernels/float_matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "kernels/f16_amx_gemm.h"
#include "kernels/f16_panels.h"
#include "kernels/float_tile_dots.h"
#include "kernels/owned_rows.h"

namespace lowbit {

namespace {

bool is_float_type(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }
bool is_q6_k(GgmlType t) { return t == GgmlType::Q6_K; }
bool is_q4_k_or_q5_k(GgmlType t) { return t == GgmlType::Q4_K || t == GgmlType::Q5_K; }
bool is_q2_k(GgmlType t) { return t == GgmlType::Q2_K; }
bool is_q3_k(GgmlType t) { return t == GgmlType::Q3_K; }
bool is_iq4_xs(GgmlType t) { return t == GgmlType::IQ4_XS; }
bool is_q4_1_family(GgmlType t) { return t == GgmlType::Q4_1 || t == GgmlType::Q5_0 || t == GgmlType::Q5_1; }

// out[g] = x[n g] + ... + x[n g + n - 1], left to right.
void group_sums(const float* x, int64_t groups, int64_t n, float* out) {
  for (int64_t g = 0; g < groups; ++g) {
    float s = 0.0f;
    for (int64_t l = 0; l < n; ++l) s += x[n * g + l];
    out[g] = s;
  }
}

struct FloatIsa {
  const char* name;
  FloatTileDots dots;
  FloatRowDequantize dequantize;
  FloatTileDots f32_dots;
  // A 4-row tile of 4 tokens needs 21 vector registers: AVX2's 16 take 3
  // tokens at a time (0.59 against 0.88 cycles per 8 weight-tokens on a Zen 3:
  // float_tile_tokens).
  int tile_tokens;
  FloatPanelKernel panel;
  int panel_tokens;  // tokens from which panel beats the tiles (measured: see FloatMatmul::forward)
};

class FloatMatmul final : public Matmul {
 public:
  FloatMatmul(const WeightView& w, const FloatIsa& isa, const std::string& kernel_name, ThreadPool& pool)
      : Matmul(w.rows, w.cols),
        name_(w.name),
        float_rows_(is_float_type(w.type)),
        dots_(isa.dots),
        f32_dots_(isa.f32_dots),
        tile_tokens_(isa.tile_tokens),
        dequantize_(isa.dequantize),
        panel_(isa.panel.gemm),
        lanes_(isa.panel.lanes),
        k_group_(isa.panel.k_group),
        panel_tokens_(isa.panel_tokens),
        block_size_(ggml_type_info(w.type).block_size),
        block_bytes_(ggml_type_info(w.type).block_bytes),
        row_bytes_(ggml_row_bytes(w.type, w.cols)),
        weights_(copy_rows(w, row_bytes_, pool)),
        kernel_name_(kernel_name),
        xsum_group_(float_xsum_group(w.type)) {
    // Many tokens go through panels of dequantized rows (so only the
    // few-token calls below read x sums).
    if (dequantize_ == nullptr || panel_ == nullptr) fail("tensor ", name_, ": kernel ", kernel_name, " has no dequantizer");
    if (kFloatPanelChunk % block_size_ != 0)
      fail("tensor ", name_, ": kernel ", kernel_name, ": blocks of ", block_size_, " values do not tile the panels' chunks of ",
           kFloatPanelChunk);
  }

  std::string kernel_name() const override { return kernel_name_; }
  bool uses_int8_activations() const override { return false; }
  int64_t weight_bytes() const override { return row_bytes_ * rows_; }

  // 1 to 4 tokens: one FloatTileDots call per chunk of rows (which may read
  // several rows at once, far apart). A few more: tile by tile, the tile's
  // rows in L1 (the k-quants dequantized to floats first) while each block of
  // tile_tokens_ tokens passes over them. From panel_tokens_ on:
  // FloatPanelGemm, tokens in the lanes. On an Intel Xeon (one thread, a
  // 16384 x 2560 matrix; docs/performance.md "Session 31", "Session 32") the
  // AVX-512 panels with a lane per token ran F16 and Q4_K at 1.1-1.3x the
  // tiles' multiply-adds per second at 12 to 16 tokens and 1.4-2.9x from 32
  // on, yet 0.8x at 8 (half the lanes empty); with lane pairs (8 tokens a
  // vector) 8 tokens run at 1.4x the tiles (F16; Q4_K 1.17x), and 5 and 6
  // sequences decoding together alike or 2-3% faster: 5 on. With AVX2 (8
  // lanes, one per token) 0.85-0.9x at 8 and 12 tokens, 1.15-2x from 16: 16
  // on (NEON too, unmeasured).
  void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const override {
    if (in.k() != cols_) fail("tensor ", name_, ": input has ", in.k(), " features, matrix has ", cols_);
    // Tiles of few tokens with an offset per sub-block (Q2_K, Q4_K, Q5_K,
    // Q4_1, Q5_1) read the sums of x per sub-block: tokens * k adds, once per
    // call. Grown once per calling thread, so the token loop does not allocate.
    thread_local std::vector<float> xsum_buffer;
    const float* xsum = nullptr;
    if (xsum_group_ > 0 && in.tokens() <= kFloatTileTokens) {
      const int64_t groups = cols_ / xsum_group_;
      if (xsum_buffer.size() < static_cast<size_t>(in.tokens() * groups))
        xsum_buffer.resize(static_cast<size_t>(in.tokens() * groups));
      for (int64_t t = 0; t < in.tokens(); ++t)
        group_sums(in.x() + t * cols_, groups, xsum_group_, xsum_buffer.data() + t * groups);
      xsum = xsum_buffer.data();
    }
    // Panels read x packed with the tokens in the lanes, a vector of tokens
    // per chunk of the pool. Grown once per calling thread; the pool's threads
    // have thread_locals of their own, so they take this one's by pointer.
    const bool panels = in.tokens() >= panel_tokens_;
    thread_local AlignedBuffer<float> packed;
    const int64_t vectors = (in.tokens() + vector_tokens() - 1) / vector_tokens();
    if (panels && packed.size() < static_cast<size_t>(vectors * packed_floats()))
      packed = AlignedBuffer<float>(static_cast<size_t>(vectors * packed_floats()));
    float* const xt = packed.data();
    if (panels)
      pool.parallel_for(vectors, 1, [&](int64_t begin, int64_t end, int) {
        for (int64_t v = begin; v < end; ++v) pack_tokens(in, v, xt + v * packed_floats());
      });
    const int64_t tiles = (rows_ + kFloatTileRows - 1) / kFloatTileRows;
    // Many chunks per thread: dynamic balance across fast and slow cores.
    const int64_t chunk = std::max<int64_t>(1, tiles / (16 * pool.size()));
    pool.parallel_for(tiles, chunk, [&](int64_t begin, int64_t end, int) {
      const int64_t r0 = begin * kFloatTileRows, r1 = std::min(rows_, end * kFloatTileRows);
      if (in.tokens() <= kFloatTileTokens) {
        dots_(weights_.data() + r0 * row_bytes_, row_bytes_, static_cast<int>(r1 - r0), in.x(), cols_, xsum,
              static_cast<int>(in.tokens()), cols_, y + r0, rows_);
      } else if (!panels) {
        forward_tiles(in, y, r0, r1);
      } else {
        // Blocks of kFloatPanelTokens tokens, each over panels of
        // kFloatPanelRows rows (a panel's chunk converted or dequantized once
        // for the block's tokens).
        for (int64_t t0 = 0; t0 < in.tokens(); t0 += kFloatPanelTokens) {
          const int tokens = static_cast<int>(std::min<int64_t>(kFloatPanelTokens, in.tokens() - t0));
          for (int64_t p = r0; p < r1; p += kFloatPanelRows) {
            const int rows = static_cast<int>(std::min<int64_t>(kFloatPanelRows, r1 - p));
            const int next = static_cast<int>(std::min<int64_t>(kFloatPanelRows, r1 - p - rows));
            panel_(weights_.data() + p * row_bytes_, row_bytes_, rows, dequantize_, block_size_, block_bytes_,
                   xt + t0 / vector_tokens() * packed_floats(), tokens, cols_, y + t0 * rows_ + p, rows_, next);
          }
        }
      }
    });
  }

 private:
  // Rows [r0, r1) tile by tile for a few more tokens than one call takes.
  void forward_tiles(const ActivationBatch& in, float* y, int64_t r0, int64_t r1) const {
    // The k-quants' tile dequantized once, into floats exactly as the
    // reference gives them, then the F32 tile. Grown once per thread.
    thread_local AlignedBuffer<float> tile_floats;
    if (!float_rows_ && tile_floats.size() < static_cast<size_t>(kFloatTileRows * cols_))
      tile_floats = AlignedBuffer<float>(static_cast<size_t>(kFloatTileRows * cols_));
    for (int64_t r = r0; r < r1; r += kFloatTileRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kFloatTileRows, r1 - r));
      const uint8_t* tile = weights_.data() + r * row_bytes_;
      int64_t tile_bytes = row_bytes_;
      FloatTileDots dots = dots_;
      if (!float_rows_) {
        for (int i = 0; i < rows; ++i)
          dequantize_(weights_.data() + (r + i) * row_bytes_, cols_ / block_size_, tile_floats.data() + i * cols_);
        tile = reinterpret_cast<const uint8_t*>(tile_floats.data());
        tile_bytes = cols_ * 4;
        dots = f32_dots_;
      }
      for (int64_t t0 = 0; t0 < in.tokens(); t0 += tile_tokens_) {
        const int tokens = static_cast<int>(std::min<int64_t>(tile_tokens_, in.tokens() - t0));
        dots(tile, tile_bytes, rows, in.x() + t0 * cols_, cols_, nullptr, tokens, cols_, y + t0 * rows_ + r, rows_);
      }
    }
  }

  int64_t vector_tokens() const { return lanes_ / k_group_; }
  // Floats per packed token vector: steps of k_group_ values of k, lanes_ each.
  int64_t packed_floats() const { return (cols_ + k_group_ - 1) / k_group_ * lanes_; }

  // Token vector v of `in` as FloatPanelGemm reads it: step s's lanes hold
  // its tokens' k_group_ values of k from s * k_group_ each, 0 past the end.
  void pack_tokens(const ActivationBatch& in, int64_t v, float* xt) const {
    const int64_t t0 = v * vector_tokens(), n = std::min<int64_t>(vector_tokens(), in.tokens() - t0);
    const int64_t g = k_group_;
    if (n < vector_tokens() || cols_ % g != 0) std::fill(xt, xt + packed_floats(), 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      const float* x = in.x() + (t0 + j) * cols_;
      for (int64_t s = 0; s * g < cols_; ++s)
        for (int64_t p = 0; p < std::min(g, cols_ - s * g); ++p) xt[s * lanes_ + j * g + p] = x[s * g + p];
    }
  }

  std::string name_;  // the tensor's, for errors
  bool float_rows_;                // F32, F16, BF16: the tiles read the rows as stored
  FloatTileDots dots_;             // 1 to kFloatTileTokens tokens
  FloatTileDots f32_dots_;         // the k-quants' tiles, dequantized, for a few more
  int tile_tokens_;                // tokens per tile call beyond one call's: what fits the registers
  FloatRowDequantize dequantize_;  // from panel_tokens_ on: panels of rows in floats ...
  FloatPanelGemm panel_;           // ... times the tokens, packed
  int lanes_;                      // floats per packed vector: the ISA's
  int k_group_;                    // values of k per token and vector: lanes_ / k_group_ tokens
  int panel_tokens_;               // tokens from which the panels run
  int64_t block_size_, block_bytes_;  // the type's values and bytes per block
  int64_t row_bytes_;
  AlignedBuffer<uint8_t> weights_;  // [rows][row_bytes] as in the file
  std::string kernel_name_;
  int64_t xsum_group_;  // float_xsum_group: 0, 16 or 32
};

#if LOWBIT_X86_KERNELS
// F16 with AVX-512 on Intel: the rows repacked into panels (f16_panels.h),
// every token count through one GEMM (one FMA chain per row and token).
// Measured on an Intel Xeon only (docs/performance.md "Session 33"); AMD's
// AVX-512 cores (Zen 4, Zen 5) keep the file's layout and the one-token
// path tuned on a Zen 5 (non-temporal prefetch, four streams).
bool takes_f16_panels(GgmlType type, const CpuFeatures& cpu) {
  return type == GgmlType::F16 && cpu.has_avx512_level() && !cpu.vendor_amd;
}

// The f16 family's matmul where takes_f16_panels.
class F16PanelMatmul final : public Matmul {
 public:
  F16PanelMatmul(const WeightView& w, const std::string& kernel_name, bool amx, ThreadPool& pool)
      : Matmul(w.rows, w.cols),
        name_(w.name),
        kernel_name_(amx ? kernel_name + "-amx" : kernel_name),
        amx_(amx),
        panels_(pack_f16_panels(w, pool)) {}

  std::string kernel_name() const override { return kernel_name_; }
  bool uses_int8_activations() const override { return false; }
  int64_t weight_bytes() const override { return rows_ * cols_ * 2; }

  void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const override {
    if (in.k() != cols_) fail("tensor ", name_, ": input has ", in.k(), " features, matrix has ", cols_);
    if (amx_ && in.tokens() >= kAmxFromTokens) return forward_amx(in, y, pool);
    const int64_t panels = (rows_ + kF16PanelRows - 1) / kF16PanelRows;
    // Many chunks per thread: dynamic balance across fast and slow cores.
    const int64_t chunk = std::max<int64_t>(1, panels / (16 * pool.size()));
    const auto panel = [&](int64_t p) { return panels_.data() + p * kF16PanelRows * cols_; };
    const auto rows_of = [&](int64_t p) { return static_cast<int>(std::min<int64_t>(kF16PanelRows, rows_ - p * kF16PanelRows)); };
    pool.parallel_for(panels, chunk, [&](int64_t begin, int64_t end, int) {
      if (in.tokens() >= 1 && in.tokens() <= kF16PairTokens) {
        // The chunk's halves side by side.
        const int64_t half = (end - begin) / 2;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t a = begin + i, b = begin + half + i;
          f16_panel_pair_avx512(panel(a), panel(b), cols_, in.x(), cols_, static_cast<int>(in.tokens()),
                                y + a * kF16PanelRows, y + b * kF16PanelRows, rows_, rows_of(a), rows_of(b));
        }
        begin += 2 * half;
      }
      for (int64_t p = begin; p < end; ++p)
        f16_panel_gemm_avx512(panel(p), cols_, in.x(), cols_, in.tokens(), y + p * kF16PanelRows, rows_, rows_of(p));
    });
  }

  // Tokens from which AMX-BF16 takes the call (f16_amx_gemm.h). A call costs
  // one token block's tile products and the conversion however few of its 16
  // tokens are real. One thread, a 16384 x 2560 matrix: alike the panels at
  // 10 tokens, 1.1-1.2x at 12, 1.3-1.45x at 16; with 2 threads, 12 sequences
  // decoding together ran 1-4% faster end to end, 16 11-14%, 24 11-14%
  // (docs/performance.md "Session 36").
  static constexpr int64_t kAmxFromTokens = 12;

 private:
  // Chunks of tokens whose pieces (6 bytes a value) stay in L2, about this
  // many bytes, while every row group of the matrix passes over them.
  static constexpr int64_t kAmxChunkBytes = int64_t{1} << 21;

  void forward_amx(const ActivationBatch& in, float* y, ThreadPool& pool) const {
    const int64_t tokens = in.tokens();
    const int64_t chunk = std::max<int64_t>(32, kAmxChunkBytes / (6 * ((cols_ + 31) / 32 * 32)) / 32 * 32);
    // The chunk's pieces, shared by the pool's threads (who take this
    // thread's buffer by pointer). Grown once per calling thread.
    thread_local AlignedBuffer<uint16_t> laid;
    const auto size = static_cast<size_t>(f16_amx_laid_tokens_size(std::min(chunk, tokens), cols_));
    if (laid.size() < size) laid = AlignedBuffer<uint16_t>(size);
    uint16_t* const pieces = laid.data();
    const int64_t panels = (rows_ + kF16PanelRows - 1) / kF16PanelRows;
    for (int64_t t0 = 0; t0 < tokens; t0 += chunk) {
      const int64_t n = std::min(chunk, tokens - t0);
      const float* x = in.x() + t0 * cols_;
      pool.parallel_for((n + kF16AmxTokens - 1) / kF16AmxTokens, 1, [&](int64_t begin, int64_t end, int) {
        for (int64_t b = begin; b < end; ++b) lay_f16_amx_tokens(x, cols_, n, cols_, b, pieces);
      });
      pool.parallel_for(panels, std::max<int64_t>(1, panels / (16 * pool.size())), [&](int64_t begin, int64_t end, int) {
        f16_amx_gemm(panels_.data(), rows_, cols_, begin, end, pieces, n, y + t0 * rows_, rows_);
      });
    }
  }

  std::string name_;  // the tensor's, for errors
  std::string kernel_name_;
  bool amx_;  // AMX-BF16 for kAmxFromTokens tokens and more
  AlignedBuffer<uint16_t> panels_;  // pack_f16_panels
};
#endif

FloatIsa pick_isa(GgmlType type, const CpuFeatures& cpu) {
#if LOWBIT_X86_KERNELS
  if (cpu.has_avx512_level())
    return {"avx512", float_tile_dots_avx512(type, float_prefetch_for(cpu.vendor_amd)), float_row_dequantize_avx512(type),
            float_tile_dots_avx512(GgmlType::F32, FloatPrefetch::None), 4, float_panel_gemm_avx512(), 5};
  if (cpu.has_avx2_level())
    return {"avx2", float_tile_dots_avx2(type, float_prefetch_for(cpu.vendor_amd)), float_row_dequantize_avx2(type),
            float_tile_dots_avx2(GgmlType::F32, FloatPrefetch::None), 3, float_panel_gemm_avx2(), 16};
#endif
#if LOWBIT_NEON_KERNELS
  // NEON's 8-lane vectors are register pairs: 2 tokens keep a 4-row tile's
  // 8 accumulators, 2 activation and 1 weight vectors in 22 of the 32
  // registers (not measured on Arm hardware).
  if (cpu.has_neon_level())
    return {"neon", float_tile_dots_neon(type, FloatPrefetch::None), float_row_dequantize_neon(type),
            float_tile_dots_neon(GgmlType::F32, FloatPrefetch::None), 2, float_panel_gemm_neon(), 16};
#endif
  return {"", nullptr, nullptr, nullptr, 0, {nullptr, 0, 0}, 0};
}

// Every family here reads rows converted to float on the fly, in the file's
// layout (F16 on Intel's AVX-512: row panels, takes_f16_panels).
template <bool (*kAccepts)(GgmlType)>
int score(const WeightView& w, const CpuFeatures& cpu) {
  if (!kAccepts(w.type) || pick_isa(w.type, cpu).dots == nullptr) return 0;
  if (w.cols % ggml_type_info(w.type).block_size != 0) return 0;
  return cpu.has_avx512_level() ? 30 : 20;
}

template <bool (*kAccepts)(GgmlType)>
std::unique_ptr<Matmul> make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool, const char* family,
                             const char* types) {
  const FloatIsa isa = pick_isa(w.type, cpu);
  if (score<kAccepts>(w, cpu) == 0)
    fail("tensor ", w.name, ": kernel ", family, " needs ", types, " weights with whole blocks per row and AVX2 + F16C (or NEON: float and Q6_K, Q3_K, IQ4_XS)",
         " (type ", ggml_type_name(w.type), ", ", w.cols, " columns, cpu: ", cpu.describe(), ")");
#if LOWBIT_X86_KERNELS
  if (takes_f16_panels(w.type, cpu))
    return std::make_unique<F16PanelMatmul>(w, cat(family, "/", isa.name), cpu.amx_bf16, pool);
#endif
  return std::make_unique<FloatMatmul>(w, isa, cat(family, "/", isa.name), pool);
}

}  // namespace

FloatPanelOrder float_panel_order(const CpuFeatures& cpu, GgmlType type) {
#if LOWBIT_X86_KERNELS
  if (takes_f16_panels(type, cpu)) return {1, 1};
#endif
  const FloatIsa isa = pick_isa(type, cpu);
  return {isa.panel_tokens, isa.panel.k_group};
}

KernelFamily float_kernel_family() {
  return {"f16", "F16 / BF16 / F32 x float, float accumulation (AVX2+F16C / AVX-512)", score<is_float_type>,
          [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_float_type>(w, cpu, pool, "f16", "F32, F16 or BF16");
          }};
}

KernelFamily q6_k_kernel_family() {
  return {"q6_k", "Q6_K values x float per sub-block of 16, times its step, float accumulation (AVX2+F16C / AVX-512 / NEON)",
          score<is_q6_k>,
          [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_q6_k>(w, cpu, pool, "q6_k", "Q6_K");
          }};
}

KernelFamily q4_k_kernel_family() {
  return {"q4_k",
          "Q4_K / Q5_K values x float per sub-block of 32, times its step, less its min, float accumulation "
          "(AVX2+F16C / AVX-512)",
          score<is_q4_k_or_q5_k>, [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_q4_k_or_q5_k>(w, cpu, pool, "q4_k", "Q4_K or Q5_K");
          }};
}

KernelFamily q2_k_kernel_family() {
  return {"q2_k",
          "Q2_K values x float per sub-block of 16, times its step, less its min, float accumulation "
          "(AVX2+F16C / AVX-512)",
          score<is_q2_k>, [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_q2_k>(w, cpu, pool, "q2_k", "Q2_K");
          }};
}

KernelFamily q3_k_kernel_family() {
  return {"q3_k", "Q3_K values x float per sub-block of 16, times its step, float accumulation (AVX2+F16C / AVX-512 / NEON)",
          score<is_q3_k>, [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_q3_k>(w, cpu, pool, "q3_k", "Q3_K");
          }};
}

KernelFamily q4_1_kernel_family() {
  return {"q4_1",
          "Q4_1 / Q5_0 / Q5_1 values x float per block of 32, times its step, plus its offset, float accumulation "
          "(AVX2+F16C / AVX-512)",
          score<is_q4_1_family>, [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_q4_1_family>(w, cpu, pool, "q4_1", "Q4_1, Q5_0 or Q5_1");
          }};
}

KernelFamily iq4_xs_kernel_family() {
  return {"iq4_xs",
          "IQ4_XS codebook values x float per sub-block of 32, times its step, float accumulation "
          "(AVX2+F16C / AVX-512 / NEON)",
          score<is_iq4_xs>, [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_iq4_xs>(w, cpu, pool, "iq4_xs", "IQ4_XS");
          }};
}

}  // namespace lowbit
