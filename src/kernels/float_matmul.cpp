#include "kernels/float_matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
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

class FloatMatmul final : public Matmul {
 public:
  FloatMatmul(const WeightView& w, FloatTileDots dots, FloatRowDequantize dequantize, FloatTileDots f32_dots,
              int tile_tokens, const std::string& kernel_name, ThreadPool& pool)
      : Matmul(w.rows, w.cols),
        name_(w.name),
        dots_(dots),
        tile_tokens_(tile_tokens),
        dequantize_(dequantize),
        f32_dots_(f32_dots),
        blocks_(w.cols / ggml_type_info(w.type).block_size),
        row_bytes_(ggml_row_bytes(w.type, w.cols)),
        weights_(copy_rows(w, row_bytes_, pool)),
        kernel_name_(kernel_name),
        xsum_group_(float_xsum_group(w.type)) {
    // Every type whose tiles read x sums dequantizes for many tokens, so only
    // the few-token calls below need them.
    if (xsum_group_ > 0 && dequantize_ == nullptr) fail("tensor ", name_, ": kernel ", kernel_name, " has no dequantizer");
  }

  std::string kernel_name() const override { return kernel_name_; }
  bool uses_int8_activations() const override { return false; }
  int64_t weight_bytes() const override { return row_bytes_ * rows_; }

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
    const int64_t tiles = (rows_ + kFloatTileRows - 1) / kFloatTileRows;
    // Many chunks per thread: dynamic balance across fast and slow cores.
    const int64_t chunk = std::max<int64_t>(1, tiles / (16 * pool.size()));
    pool.parallel_for(tiles, chunk, [&](int64_t begin, int64_t end, int) {
      if (in.tokens() <= kFloatTileTokens) {  // one call for the chunk's rows: it may read several at once
        const int64_t r0 = begin * kFloatTileRows, r1 = std::min(rows_, end * kFloatTileRows);
        dots_(weights_.data() + r0 * row_bytes_, row_bytes_, static_cast<int>(r1 - r0), in.x(), cols_,
              xsum, static_cast<int>(in.tokens()), cols_, y + r0, rows_);
        return;
      }
      // k-quant rows for many tokens: a tile's rows dequantized once, into
      // floats exactly as the reference gives them, then the F32 tile. Grown
      // once per thread.
      thread_local AlignedBuffer<float> tile_floats;
      if (dequantize_ != nullptr && tile_floats.size() < static_cast<size_t>(kFloatTileRows * cols_))
        tile_floats = AlignedBuffer<float>(static_cast<size_t>(kFloatTileRows * cols_));
      for (int64_t tile = begin; tile < end; ++tile) {
        const int64_t r0 = tile * kFloatTileRows;
        const int rows = static_cast<int>(std::min<int64_t>(kFloatTileRows, rows_ - r0));
        if (dequantize_ != nullptr) {
          for (int r = 0; r < rows; ++r)
            dequantize_(weights_.data() + (r0 + r) * row_bytes_, blocks_, tile_floats.data() + r * cols_);
          const auto* tile_rows = reinterpret_cast<const uint8_t*>(tile_floats.data());
          for (int64_t t0 = 0; t0 < in.tokens(); t0 += tile_tokens_) {
            const int tokens = static_cast<int>(std::min<int64_t>(tile_tokens_, in.tokens() - t0));
            f32_dots_(tile_rows, cols_ * 4, rows, in.x() + t0 * cols_, cols_, nullptr, tokens, cols_,
                      y + t0 * rows_ + r0, rows_);
          }
          continue;
        }
        // A tile's rows stay in L1 while every token block passes over them.
        for (int64_t t0 = 0; t0 < in.tokens(); t0 += tile_tokens_) {
          const int tokens = static_cast<int>(std::min<int64_t>(tile_tokens_, in.tokens() - t0));
          dots_(weights_.data() + r0 * row_bytes_, row_bytes_, rows, in.x() + t0 * cols_, cols_, nullptr, tokens, cols_,
                y + t0 * rows_ + r0, rows_);
        }
      }
    });
  }

 private:
  std::string name_;  // the tensor's, for errors
  FloatTileDots dots_;
  int tile_tokens_;  // tokens per tile call when there are many: what fits the ISA's registers
  FloatRowDequantize dequantize_;  // the k-quants: many tokens go through f32_dots_
  FloatTileDots f32_dots_;
  int64_t blocks_;  // per row
  int64_t row_bytes_;
  AlignedBuffer<uint8_t> weights_;  // [rows][row_bytes] as in the file
  std::string kernel_name_;
  int64_t xsum_group_;  // float_xsum_group: 0, 16 or 32
};

struct FloatIsa {
  const char* name;
  FloatTileDots dots;
  FloatRowDequantize dequantize;
  FloatTileDots f32_dots;
  // A 4-row tile of 4 tokens needs 21 vector registers: AVX2's 16 take 3
  // tokens at a time (0.59 against 0.88 cycles per 8 weight-tokens on a Zen 3:
  // float_tile_tokens).
  int tile_tokens;
};

FloatIsa pick_isa(GgmlType type, const CpuFeatures& cpu) {
#if LOWBIT_X86_KERNELS
  if (cpu.has_avx512_level())
    return {"avx512", float_tile_dots_avx512(type, float_prefetch_for(cpu.vendor_amd)), float_row_dequantize_avx512(type),
            float_tile_dots_avx512(GgmlType::F32, FloatPrefetch::None), 4};
  if (cpu.has_avx2_level())
    return {"avx2", float_tile_dots_avx2(type, float_prefetch_for(cpu.vendor_amd)), float_row_dequantize_avx2(type),
            float_tile_dots_avx2(GgmlType::F32, FloatPrefetch::None), 3};
#endif
#if LOWBIT_NEON_KERNELS
  // NEON's 8-lane vectors are register pairs: 2 tokens keep a 4-row tile's
  // 8 accumulators, 2 activation and 1 weight vectors in 22 of the 32
  // registers (not measured on Arm hardware).
  if (cpu.has_neon_level())
    return {"neon", float_tile_dots_neon(type, FloatPrefetch::None), float_row_dequantize_neon(type),
            float_tile_dots_neon(GgmlType::F32, FloatPrefetch::None), 2};
#endif
  return {"", nullptr, nullptr, nullptr, 0};
}

// Every family here reads rows in the file's layout, converted to float on the fly.
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
  return std::make_unique<FloatMatmul>(w, isa.dots, isa.dequantize, isa.f32_dots, isa.tile_tokens,
                                       cat(family, "/", isa.name), pool);
}

}  // namespace

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
