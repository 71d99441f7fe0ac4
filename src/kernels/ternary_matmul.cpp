#include "kernels/ternary_matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace lowbit {

namespace {

// y[r] = float(dots[r] - offset) * inv for r < rows. With the row count known
// at compile time (whole groups of 16 rows) and the pointers __restrict, GCC
// vectorizes it at -O2; otherwise it stayed scalar, and this loop and the
// offset's took 15% as long as the tile dots themselves in prefill
// (docs/performance.md "Session 8").
template <int kRows>
void scale_dots(const int32_t* __restrict dots, int32_t offset, float inv, float* __restrict y) {
  for (int r = 0; r < kRows; ++r) y[r] = static_cast<float>(dots[r] - offset) * inv;
}

void scale_dots(const int32_t* dots, int32_t offset, float inv, float* y, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r) y[r] = static_cast<float>(dots[r] - offset) * inv;
}

// sums[i] += dots[i], n a multiple of 16 (whole tiles of rows): vectorized as scale_dots.
void add_dots(int32_t* __restrict sums, const int32_t* __restrict dots, int64_t n) {
  for (int64_t i = 0; i < n; i += 16)
    for (int j = 0; j < 16; ++j) sums[i + j] += dots[i + j];
}

}  // namespace

TernaryMatmul::TernaryMatmul(const WeightView& w, std::string name, float scale, int tile_rows, int max_tokens)
    : Matmul(w.rows, w.cols),
      tensor_name_(w.name),
      name_(std::move(name)),
      scale_(scale),
      tile_rows_(tile_rows),
      max_tokens_(max_tokens),
      tiles_((w.rows + tile_rows - 1) / tile_rows) {
  if (tile_rows % 16 != 0) fail("kernel ", name_, ": ", tile_rows, " rows per tile, not a multiple of 16");
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
  forward_tokens(in, y, begin, end, 0);
}

void TernaryMatmul::forward_tokens(const ActivationBatch& in, float* y, int64_t begin, int64_t end,
                                   int64_t t_begin) const {
  if (t_begin >= in.tokens()) return;
  if (spans() > 1) return forward_spans(in, y, begin, end, t_begin);
  int32_t dots[kMaxDotsPerCall];  // [tokens][tile_rows]
  for (int64_t tile = begin; tile < end; ++tile) {
    for (int64_t t0 = t_begin; t0 < in.tokens(); t0 += max_tokens_) {
      const int tokens = static_cast<int>(std::min<int64_t>(max_tokens_, in.tokens() - t0));
      tile_dots(tile, 0, in, t0, tokens, dots);
      write_rows(tile, in, t0, tokens, dots, y);
    }
  }
}

// Long rows, split along K (i2s; spanned_tiles.h): a batch of tiles is
// taken span by span, so the activations in use at a time are one span's (a
// tile of K = 6912 streams 23 KB of weights between two reads of the same
// 6.9 KB activation row, and such matrices ran 13-28% slower per weight;
// docs/performance.md). With spans stored one after another (span-major), each
// span of a batch is still one sequential stream of weights. A batch fits the
// int32 sums on the stack; with several token blocks it is also kept small
// enough that its weights are re-read from L2 rather than memory, block after
// block.
void TernaryMatmul::forward_spans(const ActivationBatch& in, float* y, int64_t begin, int64_t end,
                                  int64_t t_begin) const {
  constexpr int64_t kL2BatchBytes = 256 << 10;
  int32_t dots[kMaxDotsPerCall];
  int32_t sums[kSpanBatchDots];
  const int spans = this->spans();
  const int64_t n_tokens = in.tokens() - t_begin;
  const bool one_block = n_tokens <= max_tokens_;
  const int64_t max_tokens = std::min<int64_t>(max_tokens_, n_tokens);
  int64_t batch = kSpanBatchDots / (tile_rows_ * max_tokens);
  if (!one_block) batch = std::clamp<int64_t>(kL2BatchBytes / std::max<int64_t>(1, weight_bytes() / tiles_), 1, batch);
  for (int64_t b0 = begin; b0 < end; b0 += batch) {
    const int64_t b1 = std::min(end, b0 + batch);
    for (int64_t t0 = t_begin; t0 < in.tokens(); t0 += max_tokens_) {
      const int tokens = static_cast<int>(std::min<int64_t>(max_tokens_, in.tokens() - t0));
      const int64_t per_tile = int64_t{tokens} * tile_rows_;
      for (int span = 0; span < spans; ++span)
        for (int64_t tile = b0; tile < b1; ++tile) {
          int32_t* s = sums + (tile - b0) * per_tile;
          tile_dots(tile, span, in, t0, tokens, span == 0 ? s : dots);
          if (span > 0) add_dots(s, dots, per_tile);
        }
      for (int64_t tile = b0; tile < b1; ++tile) write_rows(tile, in, t0, tokens, sums + (tile - b0) * per_tile, y);
    }
  }
}

void TernaryMatmul::write_rows(int64_t tile, const ActivationBatch& in, int64_t t0, int tokens, const int32_t* dots,
                               float* y, bool codes) const {
  const int64_t r0 = tile * tile_rows_;
  const int64_t rows = std::min<int64_t>(tile_rows_, rows_ - r0);
  for (int t = 0; t < tokens; ++t) {
    // x 1.0f is exact: exact kernels keep the ref's float operations.
    const float inv = scale_ / in.scale()[t0 + t] * dot_unit(t0 + t);
    const int32_t offset = codes ? in.sum()[t0 + t] : 0;
    const int32_t* d = dots + t * tile_rows_;
    float* yt = y + (t0 + t) * rows_ + r0;
    int64_t r = 0;
    for (; r + 16 <= rows; r += 16) scale_dots<16>(d + r, offset, inv, yt + r);
    scale_dots(d + r, offset, inv, yt + r, rows - r);
  }
}

}  // namespace lowbit
