// The "ref" kernel: every format through its scalar reference (src/quant).
#include <vector>

#include "core/error.h"
#include "kernels/matmul.h"
#include "quant/weight_format.h"

namespace lowbit {

namespace {

class ReferenceMatmul final : public Matmul {
 public:
  explicit ReferenceMatmul(const WeightView& w)
      : Matmul(w.rows, w.cols),
        w_(w),
        format_(weight_format(w.type)),
        row_bytes_(ggml_row_bytes(w.type, w.cols)),
        scale_(tensor_scale(w.type, w.data, w.rows * w.cols)) {}

  std::string kernel_name() const override { return "ref"; }
  bool uses_int8_activations() const override { return format_.dot_i8 != nullptr; }
  int64_t weight_bytes() const override { return row_bytes_ * rows_; }

  void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const override {
    if (in.k() != cols_) fail("tensor ", w_.name, ": input has ", in.k(), " features, matrix has ", cols_);
    if (format_.dot_i8 != nullptr) {
      in.quantize(pool);
      pool.parallel_for(rows_, 16, [&](int64_t begin, int64_t end, int) {
        for (int64_t t = 0; t < in.tokens(); ++t) {
          const int8_t* q = in.q() + t * in.k_padded();
          const float inv = scale_ / in.scale()[t];
          for (int64_t r = begin; r < end; ++r)
            y[t * rows_ + r] = format_.dot_i8(w_.data + r * row_bytes_, q, cols_) * inv;
        }
      });
      return;
    }
    // Float formats: dequantize a row, dot in float.
    pool.parallel_for(rows_, 16, [&](int64_t begin, int64_t end, int) {
      std::vector<float> row(static_cast<size_t>(cols_));
      for (int64_t r = begin; r < end; ++r) {
        format_.dequantize_row(w_.data + r * row_bytes_, row.data(), cols_);
        for (int64_t t = 0; t < in.tokens(); ++t) {
          const float* x = in.x() + t * cols_;
          float acc = 0;
          for (int64_t k = 0; k < cols_; ++k) acc += row[k] * x[k];
          y[t * rows_ + r] = acc * scale_;
        }
      }
    });
  }

 private:
  WeightView w_;
  const WeightFormat& format_;
  int64_t row_bytes_;
  float scale_;
};

}  // namespace

std::unique_ptr<Matmul> make_reference_matmul(const WeightView& w) { return std::make_unique<ReferenceMatmul>(w); }

}  // namespace lowbit
