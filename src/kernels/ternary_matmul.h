// What every ternary kernel (i2s, tl1_*, tl2_*) shares: int8 activations,
// rows in tiles split over the pool, tokens in blocks so a tile's weights are
// read from memory once per block, and the same float rescale as the "ref"
// kernel (reference_matmul.cpp): y = float(dot) * (scale / act_scale), which
// makes an exact integer dot give bitwise the ref's y.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/matmul.h"

namespace lowbit {

class TernaryMatmul : public Matmul {
 public:
  std::string kernel_name() const override { return name_; }
  bool uses_int8_activations() const override { return true; }
  void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const override;
  int64_t work_units() const override { return tiles_; }  // tiles of tile_rows rows
  void prepare_units(const ActivationBatch& in, ThreadPool& pool) const override;
  void forward_units(const ActivationBatch& in, float* y, int64_t begin, int64_t end) const override;

  // Upper bound of tile_rows * max_tokens: the dots of one call live on the stack.
  static constexpr int kMaxDotsPerCall = 1024;
  // The int32 sums of a batch of tiles when K is split into spans (stack, 32 KB).
  static constexpr int kSpanBatchDots = 8192;

 protected:
  // tile_rows: rows per tile; max_tokens: tokens per tile_dots call.
  TernaryMatmul(const WeightView& w, std::string name, float scale, int tile_rows, int max_tokens);

  // Called once per forward, before any tile_dots: per-call activation
  // preprocessing (lookup tables), on the pool.
  virtual void prepare(const ActivationBatch& in, ThreadPool& pool) const {}
  // Ranges of columns each tile is split into (forward_spans); 1 unless the kernel splits long rows.
  virtual int spans() const { return 1; }
  // dots[t][r] = sum_k t(row tile*tile_rows + r, k) * q[t0 + t][k] for t < tokens, r < tile_rows,
  // k over the span's columns (all of them when spans() == 1); the spans' dots add up to the row's.
  virtual void tile_dots(int64_t tile, int span, const ActivationBatch& in, int64_t t0, int tokens,
                         int32_t* dots) const = 0;
  // True for kernels that store codes t + 1 (i2s, tl2v): their dots are
  // sum_k (t + 1) q = sum_k t q + sum_k q, and write_rows subtracts each
  // token's sum(q) (once per row, after the spans' dots are added).
  virtual bool dots_of_codes() const { return false; }
  // What one unit of a dot is worth for `token`: 1 for exact kernels (so y is
  // bitwise the ref's), the table step for kernels with quantized tables.
  virtual float dot_unit(int64_t token) const { return 1.0f; }

  std::string tensor_name_;

  float weight_scale() const { return scale_; }

  // y rows of one tile from its int32 dots [tokens][tile_rows]: dots of
  // codes (sum(q) subtracted) when `codes`, else signed dots.
  void write_rows(int64_t tile, const ActivationBatch& in, int64_t t0, int tokens, const int32_t* dots, float* y,
                  bool codes) const;
  void write_rows(int64_t tile, const ActivationBatch& in, int64_t t0, int tokens, const int32_t* dots,
                  float* y) const {
    write_rows(tile, in, t0, tokens, dots, y, dots_of_codes());
  }
  // forward_units for tokens [t_begin, in.tokens()) only (kernels that take
  // the first tokens another way).
  void forward_tokens(const ActivationBatch& in, float* y, int64_t begin, int64_t end, int64_t t_begin) const;

 private:
  void forward_spans(const ActivationBatch& in, float* y, int64_t begin, int64_t end, int64_t t_begin) const;

  std::string name_;
  float scale_;
  int tile_rows_, max_tokens_;
  int64_t tiles_;
};

}  // namespace lowbit
