#include "kernels/float_matmul.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/float_tile_dots.h"
#include "kernels/owned_rows.h"

namespace lowbit {

namespace {

bool is_float_type(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }
bool is_q6_k(GgmlType t) { return t == GgmlType::Q6_K; }
bool is_q4_k_or_q5_k(GgmlType t) { return t == GgmlType::Q4_K || t == GgmlType::Q5_K; }

class FloatMatmul final : public Matmul {
 public:
  FloatMatmul(const WeightView& w, FloatTileDots dots, const std::string& kernel_name, ThreadPool& pool)
      : Matmul(w.rows, w.cols),
        name_(w.name),
        dots_(dots),
        row_bytes_(ggml_row_bytes(w.type, w.cols)),
        weights_(copy_rows(w, row_bytes_, pool)),
        kernel_name_(kernel_name) {}

  std::string kernel_name() const override { return kernel_name_; }
  bool uses_int8_activations() const override { return false; }
  int64_t weight_bytes() const override { return row_bytes_ * rows_; }

  void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const override {
    if (in.k() != cols_) fail("tensor ", name_, ": input has ", in.k(), " features, matrix has ", cols_);
    const int64_t tiles = (rows_ + kFloatTileRows - 1) / kFloatTileRows;
    // Many chunks per thread: dynamic balance across fast and slow cores.
    const int64_t chunk = std::max<int64_t>(1, tiles / (16 * pool.size()));
    pool.parallel_for(tiles, chunk, [&](int64_t begin, int64_t end, int) {
      if (in.tokens() <= kFloatTileTokens) {  // one call for the chunk's rows: it may read several at once
        const int64_t r0 = begin * kFloatTileRows, r1 = std::min(rows_, end * kFloatTileRows);
        dots_(weights_.data() + r0 * row_bytes_, row_bytes_, static_cast<int>(r1 - r0), in.x(), cols_,
              static_cast<int>(in.tokens()), cols_, y + r0, rows_);
        return;
      }
      for (int64_t tile = begin; tile < end; ++tile) {
        const int64_t r0 = tile * kFloatTileRows;
        const int rows = static_cast<int>(std::min<int64_t>(kFloatTileRows, rows_ - r0));
        // A tile's rows stay in L1 while every token block passes over them.
        for (int64_t t0 = 0; t0 < in.tokens(); t0 += kFloatTileTokens) {
          const int tokens = static_cast<int>(std::min<int64_t>(kFloatTileTokens, in.tokens() - t0));
          dots_(weights_.data() + r0 * row_bytes_, row_bytes_, rows, in.x() + t0 * cols_, cols_, tokens, cols_,
                y + t0 * rows_ + r0, rows_);
        }
      }
    });
  }

 private:
  std::string name_;  // the tensor's, for errors
  FloatTileDots dots_;
  int64_t row_bytes_;
  AlignedBuffer<uint8_t> weights_;  // [rows][row_bytes] as in the file
  std::string kernel_name_;
};

struct FloatIsa {
  const char* name;
  FloatTileDots dots;
};

FloatIsa pick_isa(GgmlType type, const CpuFeatures& cpu) {
  if (cpu.has_avx512_level()) return {"avx512", float_tile_dots_avx512(type, cpu.vendor_amd)};
  if (cpu.has_avx2_level()) return {"avx2", float_tile_dots_avx2(type, cpu.vendor_amd)};
  return {"", nullptr};
}

// Both families read rows in the file's layout, dequantized on the fly to float.
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
    fail("tensor ", w.name, ": kernel ", family, " needs ", types, " weights with whole blocks per row and AVX2 + F16C",
         " (type ", ggml_type_name(w.type), ", ", w.cols, " columns, cpu: ", cpu.describe(), ")");
  return std::make_unique<FloatMatmul>(w, isa.dots, cat(family, "/", isa.name), pool);
}

}  // namespace

KernelFamily float_kernel_family() {
  return {"f16", "F16 / BF16 / F32 x float, float accumulation (AVX2+F16C / AVX-512)", score<is_float_type>,
          [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_float_type>(w, cpu, pool, "f16", "F32, F16 or BF16");
          }};
}

KernelFamily q6_k_kernel_family() {
  return {"q6_k", "Q6_K dequantized in registers x float, float accumulation (AVX2+F16C / AVX-512)", score<is_q6_k>,
          [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_q6_k>(w, cpu, pool, "q6_k", "Q6_K");
          }};
}

KernelFamily q4_k_kernel_family() {
  return {"q4_k", "Q4_K / Q5_K dequantized in registers x float, float accumulation (AVX2+F16C / AVX-512)",
          score<is_q4_k_or_q5_k>, [](const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
            return make<is_q4_k_or_q5_k>(w, cpu, pool, "q4_k", "Q4_K or Q5_K");
          }};
}

}  // namespace lowbit
