// Runs the forward pass of one sequence: the KV cache and every scratch
// buffer, sized once for the context and the largest batch, then reused (no
// allocation in the token loop).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"
#include "kernels/vector_ops.h"
#include "model/model.h"

namespace lowbit {

enum class KvCacheType { F16, F32 };

// Wall time per stage of the forward pass, summed over eval calls, for
// `lowbit bench --profile`. Timing costs two clock reads per stage, so it is
// only taken when a profile is attached.
struct DecodeProfile {
  enum Stage { kNorms, kQkv, kAttention, kAttnOut, kGateUp, kFfnAct, kDown, kHead, kOther, kStages };
  static const char* stage_name(int stage);
  double seconds[kStages] = {};
  int64_t weight_bytes[kStages] = {};  // matmul weight bytes read, summed over calls
  int64_t tokens = 0;                  // tokens evaluated
};

class Decoder {
 public:
  // max_batch: most tokens evaluated in one weight pass (prompt chunks).
  Decoder(const Model& model, ThreadPool& pool, int64_t max_batch = 64, KvCacheType kv_type = KvCacheType::F16);

  // Evaluates tokens[0, n) at positions pos() .. pos()+n-1 (longer inputs go in
  // chunks of max_batch). logits: [V] for the last token, or [n][V] when
  // all_logits. Throws Error when the context would overflow.
  void eval(const int32_t* tokens, int64_t n, float* logits, bool all_logits = false);

  int64_t pos() const { return pos_; }
  // Forgets positions >= n (n <= pos()).
  void truncate(int64_t n);
  const Model& model() const { return model_; }
  // Accumulates stage timings into *profile from now on (nullptr: stop).
  void set_profile(DecodeProfile* profile) { profile_ = profile; }

 private:
  void eval_batch(const int32_t* tokens, int64_t n, float* logits, bool all_logits);
  void matmul(const Linear& l, const ActivationBatch& in, float* y);
  // Matrices that read the same input, in one parallel region where their kernels allow.
  template <size_t N>
  void matmuls(const Linear* const (&ls)[N], const ActivationBatch& in, float* const (&ys)[N]);
  // Closes the stage that started at stage_start_ (a no-op without a profile).
  void end_stage(DecodeProfile::Stage stage, int64_t bytes = 0);
  // out[t] = rms_norm(x[t]) for n tokens of `dim` floats, on the pool.
  void rms_norm_rows(const float* x, const float* weight, int64_t n, int64_t dim, float* out);
  void store_kv(int64_t layer, int64_t n);
  void attention(int64_t layer, int64_t n);

  const Model& model_;
  ThreadPool& pool_;
  const VectorOps& ops_;  // vectorized where the CPU allows (kernels/vector_ops.h)
  int64_t max_batch_;
  KvCacheType kv_type_;
  int64_t pos_ = 0;
  DecodeProfile* profile_ = nullptr;
  double stage_start_ = 0;

  // Activations, B = max_batch rows each.
  AlignedBuffer<float> x_;       // [B][D] residual stream
  AlignedBuffer<float> xn_;      // [B][max(D, Q)] normed input of a matmul
  AlignedBuffer<float> q_;       // [B][Q]
  AlignedBuffer<float> k_;       // [B][KV]
  AlignedBuffer<float> v_;       // [B][KV]
  AlignedBuffer<float> att_;     // [B][Q] attention output
  AlignedBuffer<float> proj_;    // [B][D] attn_output / ffn_down result
  AlignedBuffer<float> gate_;    // [B][F]
  AlignedBuffer<float> up_;      // [B][F]
  AlignedBuffer<float> scores_;  // [threads][n_ctx][group]
  // Attention split by positions (position_parts): per range, per token, the
  // unnormalized outputs [parts][tokens][Q] and (max, sum) pairs [parts][tokens][n_head][2].
  static constexpr int64_t kMaxPositionParts = 8, kSplitItemsPerThread = 4, kMinPartPositions = 64;
  int64_t position_parts(int64_t n) const;
  int64_t split_tokens_ = 0;
  AlignedBuffer<float> part_out_, part_max_sum_;
  AlignedBuffer<float> rope_cos_, rope_sin_;  // [B][n_rot / 2] for the batch's positions
  ActivationBatch act_;          // shared int8 quantization of xn_ / gate_
  // KV cache, [layer][n_ctx][KV], in f16 (or f32).
  AlignedBuffer<uint16_t> k_cache16_, v_cache16_;
  AlignedBuffer<float> k_cache32_, v_cache32_;
};

}  // namespace lowbit
