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
  quantized_ = false;
  for (auto& s : group_sums_) s.valid = false;
  for (auto& t : tables_) t.valid = false;
}

void ActivationBatch::quantize(ThreadPool& pool) const {
  if (quantized_) return;
  // The vectorized quantization is bit for bit the reference's.
  static const auto quantize_row = [] {
    const VectorOps* v = vector_ops();
    return v != nullptr ? v->quantize_absmax : quantize_activations_absmax_ref;
  }();
  const int64_t kp = k_padded();
  pool.parallel_for(tokens_, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      int8_t* q = q_.data() + t * kp;
      const ActivationRowQuant r = quantize_row(x_ + t * k_, k_, q);
      for (int64_t i = k_; i < kp; ++i) q[i] = 0;
      scale_[t] = r.scale;
      sum_[t] = r.sum;
    }
  });
  quantized_ = true;  // the group sums were invalidated by set(), the only way to new q
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

}  // namespace lowbit
