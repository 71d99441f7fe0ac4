#include <algorithm>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/error.h"
#include "kernels/owned_rows.h"
#include "kernels/q6_k_q8k.h"
#include "quant/q6_k.h"

namespace lowbit {

namespace {

class Q6KQ8KMatmul final : public Matmul {
 public:
  Q6KQ8KMatmul(const WeightView& w, ThreadPool& pool)
      : Matmul(w.rows, w.cols),
        name_(w.name),
        row_bytes_(ggml_row_bytes(w.type, w.cols)),
        weights_(copy_rows(w, row_bytes_, pool)) {}

  std::string kernel_name() const override { return "q6_k_q8k/avx512-vnni"; }
  // It quantizes in.x() itself, per block of 256 (not the per-token int8 of in.q()).
  bool uses_int8_activations() const override { return false; }
  int64_t weight_bytes() const override { return row_bytes_ * rows_; }

  void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const override {
    if (in.k() != cols_) fail("tensor ", name_, ": input has ", in.k(), " features, matrix has ", cols_);
    const int64_t tokens = in.tokens(), k = cols_, blocks = cols_ / kQ6_KBlockSize;
    // Per token: int8 activations, block scales, 32 x sums of 4. Grown once per
    // calling thread, so the token loop does not allocate.
    thread_local std::vector<int8_t> q;
    thread_local std::vector<float> dx;
    thread_local std::vector<int32_t> xsum32;
    if (q.size() < static_cast<size_t>(tokens * k)) {
      q.resize(static_cast<size_t>(tokens * k));
      dx.resize(static_cast<size_t>(tokens * blocks));
      xsum32.resize(static_cast<size_t>(tokens * k / 4));
    }
    for (int64_t t = 0; t < tokens; ++t) {
      int8_t* qt = q.data() + t * k;
      quantize_activations_q8k(in.x() + t * k, k, qt, dx.data() + t * blocks);
      for (int64_t l = 0; l < k / 4; ++l) xsum32[t * k / 4 + l] = 32 * (qt[4 * l] + qt[4 * l + 1] + qt[4 * l + 2] + qt[4 * l + 3]);
    }
    const int8_t* qd = q.data();
    const float* dxd = dx.data();
    const int32_t* sd = xsum32.data();
    pool.parallel_for(rows_, std::max<int64_t>(16, rows_ / (16 * pool.size())), [&](int64_t begin, int64_t end, int) {
      for (int64_t r = begin; r < end; ++r)
        for (int64_t t = 0; t < tokens; ++t)
          y[t * rows_ + r] = q6_k_q8k_row_avx512(weights_.data() + r * row_bytes_, blocks, qd + t * k,
                                                 sd + t * k / 4, dxd + t * blocks);
    });
  }

 private:
  std::string name_;
  int64_t row_bytes_;
  AlignedBuffer<uint8_t> weights_;
};

int q6_k_q8k_score(const WeightView& w, const CpuFeatures& cpu) {
  if (w.type != GgmlType::Q6_K || !cpu.has_avx512_level() || !cpu.avx512vnni) return 0;
  if (w.cols % kQ6_KBlockSize != 0) return 0;
  // Forced only (--kernel q6_k_q8k): auto keeps the float q6_k, which computes
  // the head as the model defines it; this one is the peers' approximation.
  return -1;
}

std::unique_ptr<Matmul> q6_k_q8k_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  if (q6_k_q8k_score(w, cpu) == 0)
    fail("tensor ", w.name, ": kernel q6_k_q8k needs Q6_K weights with whole blocks per row and AVX-512 VNNI (type ",
         ggml_type_name(w.type), ", ", w.cols, " columns, cpu: ", cpu.describe(), ")");
  return std::make_unique<Q6KQ8KMatmul>(w, pool);
}

}  // namespace

KernelFamily q6_k_q8k_kernel_family() {
  KernelFamily f{"q6_k_q8k",
                 "Q6_K x int8 activations per 256 (llama.cpp's Q6_K x Q8_K), VNNI; approximates q6_k (AVX-512 VNNI)",
                 q6_k_q8k_score, q6_k_q8k_make};
  f.lossless = false;
  return f;
}

}  // namespace lowbit
