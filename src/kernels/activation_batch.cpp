#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kernels/matmul.h"
#include "kernels/vector_ops.h"
#include "quant/activation_quant.h"

namespace lowbit {

ActivationBatch::ActivationBatch(int64_t max_tokens, int64_t max_k)
    : max_tokens_(max_tokens),
      max_k_(max_k),
      q_(static_cast<size_t>(max_tokens * ((max_k + 63) / 64 * 64))),
      scale_(static_cast<size_t>(max_tokens)),
      sum_(static_cast<size_t>(max_tokens)) {}

void ActivationBatch::set(const float* x, int64_t tokens, int64_t k) {
  if (tokens > max_tokens_ || k > max_k_)
    fail("activation batch of ", tokens, " x ", k, " exceeds its capacity ", max_tokens_, " x ", max_k_);
  x_ = x;
  tokens_ = tokens;
  k_ = k;
  forget_derived();
}

void ActivationBatch::forget_derived() const {
  quantized_ = false;
  for (auto& s : group_sums_) s.valid = false;
  for (auto& t : tables_) t.valid = false;
  tile_rows_valid_ = false;
}

void ActivationBatch::quantize_row(int64_t t) const {
  // The vectorized quantization is bit for bit the reference's.
  static const auto quantize = [] {
    const VectorOps* v = vector_ops();
    return v != nullptr ? v->quantize_absmax : quantize_activations_absmax_ref;
  }();
  const int64_t kp = k_padded();
  int8_t* q = q_.data() + t * kp;
  const ActivationRowQuant r = quantize(x_ + t * k_, k_, q);
  for (int64_t i = k_; i < kp; ++i) q[i] = 0;
  scale_[t] = r.scale;
  sum_[t] = r.sum;
}

void ActivationBatch::quantize(ThreadPool& pool) const {
  if (quantized_) return;
  pool.parallel_for(tokens_, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) quantize_row(t);
  });
  quantized_ = true;  // the group sums were invalidated by set(), the only way to new q
}

void ActivationBatch::make_rows(ThreadPool& pool, bool quantize, FunctionRef<void(int64_t t)> make) const {
  pool.parallel_for(tokens_, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      make(t);
      if (quantize) quantize_row(t);
    }
  });
  // New rows: whatever was derived from the old ones is gone (as after set()).
  forget_derived();
  quantized_ = quantize;
}

const int32_t* ActivationBatch::group_sums(int64_t group) const {
  if (!quantized_) fail("activation group sums before quantization");
  if (group <= 0 || group % 16 != 0 || k_ % group != 0)
    fail("activation group sums: group ", group, " is not a multiple of 16 dividing k = ", k_);
  GroupSums* slot = nullptr;
  for (auto& s : group_sums_)
    if (s.group == group) slot = &s;
  for (auto& s : group_sums_) {
    if (slot != nullptr) break;
    if (s.group == 0) {  // a new size: its buffer, once
      s.group = group;
      s.sums = AlignedBuffer<int32_t>(static_cast<size_t>(max_tokens_ * (max_k_ / group)));
      slot = &s;
    }
  }
  if (slot == nullptr) fail("activation group sums: more than ", kGroupSizes, " group sizes in one batch");
  if (!slot->valid) {
    static const auto sums = [] {
      const VectorOps* v = vector_ops();
      return v != nullptr ? v->group_sums_i8 : activation_group_sums_ref;
    }();
    const int64_t groups = k_ / group;
    for (int64_t t = 0; t < tokens_; ++t) sums(q_.data() + t * k_padded(), k_, group, slot->sums.data() + t * groups);
    slot->valid = true;
  }
  return slot->sums.data();
}

void ActivationBatch::build_token_tables(TableKind kind, ThreadPool& pool) const {
  if (!quantized_) fail("activation tables before quantization");
  Tables* slot = nullptr;
  for (auto& t : tables_)
    if (t.kind.build == kind.build) slot = &t;
  for (auto& t : tables_) {
    if (slot != nullptr) break;
    if (t.kind.build == nullptr) {  // a new kind: its buffer, once
      t.kind = kind;
      t.bytes = AlignedBuffer<uint8_t>(static_cast<size_t>(max_tokens_ * kind.bytes_per_token(max_k_)));
      slot = &t;
    }
  }
  if (slot == nullptr) fail("activation tables: more than ", kTableKinds, " kinds in one batch");
  if (slot->valid) return;
  const int64_t stride = kind.bytes_per_token(k_);
  pool.parallel_for(tokens_, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) kind.build(q_.data() + t * k_padded(), k_, slot->bytes.data() + t * stride);
  });
  slot->valid = true;
}

const uint8_t* ActivationBatch::token_tables(TableKind kind) const {
  for (const auto& t : tables_)
    if (t.kind.build == kind.build && t.valid) return t.bytes.data();
  fail("activation tables used before they were built");
}

void ActivationBatch::build_tile_rows(const std::vector<int64_t>& cols, ThreadPool& pool) const {
  if (!quantized_) fail("activation tile rows before quantization");
  if (tile_rows_valid_) {
    if (cols == tile_cols_) return;
    fail("activation tile rows: two column lists for one batch of K = ", k_);
  }
  for (const int64_t c : cols)
    if (c < 0 || c >= k_padded()) fail("activation tile rows: column ", c, " outside K = ", k_);
  const auto F = static_cast<int64_t>(cols.size());
  const int64_t blocks = (tokens_ + kTileRows - 1) / kTileRows, block_bytes = F * kTileRows * kTileRowBytes;
  const int64_t most = (max_tokens_ + kTileRows - 1) / kTileRows * block_bytes;
  if (tile_rows_.size() < static_cast<size_t>(most)) tile_rows_ = AlignedBuffer<int8_t>(static_cast<size_t>(most));
  pool.parallel_for(blocks, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t b = begin; b < end; ++b)
      lay_tile_rows(q_.data(), k_padded(), k_padded(), tokens_, b, cols, tile_rows_.data() + b * block_bytes);
  });
  tile_cols_ = cols;
  tile_rows_valid_ = true;
}

void ActivationBatch::lay_tile_rows(const int8_t* q, int64_t q_stride, int64_t row_bytes, int64_t tokens, int64_t b,
                                    const std::vector<int64_t>& cols, int8_t* out) {
  for (const int64_t col : cols) {
    // A span's last block may reach past the row (spans of a whole number of
    // 16-column lines): zeros there meet zero codes.
    const int64_t n = std::clamp<int64_t>(row_bytes - col, 0, kTileRowBytes);
    for (int64_t r = 0; r < kTileRows; ++r, out += kTileRowBytes) {
      const int64_t t = b * kTileRows + r, copied = t < tokens ? n : 0;
      if (copied == kTileRowBytes) {  // (a constant size: a few vector moves)
        std::memcpy(out, q + t * q_stride + col, kTileRowBytes);
      } else {
        if (copied > 0) std::memcpy(out, q + t * q_stride + col, static_cast<size_t>(copied));
        std::memset(out + copied, 0, static_cast<size_t>(kTileRowBytes - copied));
      }
    }
  }
}

const int8_t* ActivationBatch::tile_rows(const std::vector<int64_t>& cols) const {
  if (!tile_rows_valid_ || cols != tile_cols_) fail("activation tile rows used before they were built");
  return tile_rows_.data();
}

}  // namespace lowbit
