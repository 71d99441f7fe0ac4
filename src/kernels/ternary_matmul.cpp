#include "kernels/ternary_matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace lowbit {

TernaryMatmul::TernaryMatmul(const WeightView& w, std::string name, float scale, int tile_rows, int max_tokens)
    : Matmul(w.rows, w.cols),
      tensor_name_(w.name),
      name_(std::move(name)),
      scale_(scale),
      tile_rows_(tile_rows),
      max_tokens_(max_tokens),
      tiles_((w.rows + tile_rows - 1) / tile_rows) {
  if (tile_rows * max_tokens > kMaxDotsPerCall)
    fail("kernel ", name_, ": ", tile_rows, " rows x ", max_tokens, " tokens per call exceed ", kMaxDotsPerCall);
}

void TernaryMatmul::forward(const ActivationBatch& in, float* y, ThreadPool& pool) const {
  const Matmul* self[] = {this};
  float* const ys[] = {y};
  forward_together(self, in, ys, pool);
}

void TernaryMatmul::prepare_units(const ActivationBatch& in, ThreadPool& pool) const {
  if (in.k() != cols_) fail("tensor ", tensor_name_, ": input has ", in.k(), " features, matrix has ", cols_);
  in.quantize(pool);
  prepare(in, pool);
}

void TernaryMatmul::forward_units(const ActivationBatch& in, float* y, int64_t begin, int64_t end) const {
  int32_t dots[kMaxDotsPerCall];  // [tokens][tile_rows]
  for (int64_t tile = begin; tile < end; ++tile) {
    const int64_t r0 = tile * tile_rows_;
    const int64_t rows = std::min<int64_t>(tile_rows_, rows_ - r0);
    for (int64_t t0 = 0; t0 < in.tokens(); t0 += max_tokens_) {
      const int tokens = static_cast<int>(std::min<int64_t>(max_tokens_, in.tokens() - t0));
      tile_dots(tile, in, t0, tokens, dots);
      for (int t = 0; t < tokens; ++t) {
        // x 1.0f is exact: exact kernels keep the ref's float operations.
        const float inv = scale_ / in.scale()[t0 + t] * dot_unit(t0 + t);
        float* yt = y + (t0 + t) * rows_ + r0;
        for (int64_t r = 0; r < rows; ++r) yt[r] = static_cast<float>(dots[t * tile_rows_ + r]) * inv;
      }
    }
  }
}

void TernaryMatmul::remove_code_offset(const ActivationBatch& in, int64_t t0, int tokens, int32_t* dots) const {
  for (int t = 0; t < tokens; ++t)
    for (int r = 0; r < tile_rows_; ++r) dots[t * tile_rows_ + r] -= in.sum()[t0 + t];
}

}  // namespace lowbit
