// Runs the forward pass of one sequence, or of several at once (continuous
// batching: a server's concurrent requests share each pass over the weights).
// The KV caches and every scratch buffer are sized once, for the sequences,
// the context and the largest batch, then reused (no allocation in the token
// loop).
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

// One row of a multi-sequence batch: a token of sequence `seq`, evaluated at
// that sequence's next position.
struct BatchRow {
  int32_t token = 0;
  int32_t seq = 0;
  bool logits = false;  // this row's logits are wanted
};

// Prompt tokens evaluated in one pass over the weights by run, chat, serve
// and perplexity. Prefill's ternary GEMM builds its lookup tables per 16
// tokens and derives each matrix's indices once per pass, so longer passes pay
// less per token: on the AVX2 Zen 3, 2B-4T pp128 ran 1.05x pp64 and pp256 no
// faster than pp128 (docs/performance.md, "Session 19"). Activations cost
// ~130 KB per row there (17 MB at 128).
inline constexpr int64_t kPromptBatch = 128;

// Positions per block of the KV cache (Decoder's kv_block). Within a block each
// KV head's rows are contiguous, so attention streams them; across blocks the
// cache grows as a sequence does, so pages of a short one stay unmapped.
inline constexpr int64_t kKvBlockPositions = 512;

class Decoder {
 public:
  // max_batch: most tokens evaluated in one weight pass (prompt chunks).
  // n_seq: sequences, each with a KV cache of the model's context.
  // kv_block: positions per block of the cache (a multiple of 64; tests take
  // small ones to cross blocks on tiny models).
  Decoder(const Model& model, ThreadPool& pool, int64_t max_batch = kPromptBatch, KvCacheType kv_type = KvCacheType::F16,
          int64_t n_seq = 1, int64_t kv_block = kKvBlockPositions);

  // Evaluates tokens[0, n) of sequence 0 at positions pos() .. pos()+n-1
  // (longer inputs go in chunks of max_batch). logits: [V] for the last token,
  // or [n][V] when all_logits. Throws Error when the context would overflow.
  void eval(const int32_t* tokens, int64_t n, float* logits, bool all_logits = false);
  // Evaluates rows of any sequences in one pass (n <= max_batch). A
  // sequence's rows take its next positions in row order. logits: [rows with
  // .logits][V], in row order. Throws Error, evaluating nothing, for a bad
  // sequence or a context overflow.
  void eval_rows(const BatchRow* rows, int64_t n, float* logits);

  int64_t pos(int64_t seq = 0) const { return seq_pos_[static_cast<size_t>(seq)]; }
  // Forgets positions >= n (n <= pos(seq)) of a sequence.
  void truncate(int64_t n, int64_t seq = 0);
  int64_t n_seq() const { return static_cast<int64_t>(seq_pos_.size()); }
  int64_t max_batch() const { return max_batch_; }
  const Model& model() const { return model_; }
  ThreadPool& pool() const { return pool_; }
  // Accumulates stage timings into *profile from now on (nullptr: stop).
  void set_profile(DecodeProfile* profile) { profile_ = profile; }

 private:
  // Evaluates the n rows of row_token_ / row_seq_ / row_pos_; the logits of
  // rows logit_rows_[0, n_logits) go to logits.
  void eval_batch(int64_t n, float* logits, int64_t n_logits);
  // Offset of KV head g's row at position pos of (seq, layer) in the KV
  // cache. Within a block of kv_block_ positions a head's rows follow each
  // other, head_dim apart; the next block's are kv_block_stride() further.
  // An f16 k is in slabs instead (key_slab_offset): at a multiple of kKeySlab
  // this is where that position's slab starts.
  int64_t cache_offset(int64_t seq, int64_t layer, int64_t g, int64_t pos) const;
  int64_t kv_block_stride() const;
  void matmul(const Linear& l, const ActivationBatch& in, float* y);
  // Matrices that read the same input, in one parallel region where their kernels allow.
  template <size_t N>
  void matmuls(const Linear* const (&ls)[N], const ActivationBatch& in, float* const (&ys)[N]);
  // Closes the stage that started at stage_start_ (a no-op without a profile).
  void end_stage(DecodeProfile::Stage stage, int64_t bytes = 0);
  // The input of the next matmuls: act_ set to n rows of `dim` floats at
  // out, which make(t) writes (row t) on the pool; each row is quantized as
  // soon as it is made where `int8` (any of those matmuls reads int8
  // activations: reads_int8), while it is in cache. The norms and the
  // feed-forward activation make their rows this way, with the residual add
  // before a norm in the same pass over the row (one pass each, where an add
  // over the whole batch on one thread and the quantization's own pass went
  // before; the same float operations and the same q).
  void make_input(float* out, int64_t n, int64_t dim, bool int8, FunctionRef<void(int64_t t)> make);
  template <size_t N>
  static bool reads_int8(const Linear* const (&ls)[N]) {
    for (const Linear* l : ls)
      if (l->matmul->uses_int8_activations()) return true;
    return false;
  }
  void store_kv(int64_t layer, int64_t n);
  void attention(int64_t layer, int64_t n);
  // The batch's attention work items when it has a run of kMinBlockTokens or
  // more rows of one sequence (prefill): such runs in blocks, the other rows
  // one by one, dealt over the threads. False, planning nothing, without one.
  bool plan_attention_blocks(int64_t n);
  // Attention of one layer by the planned items.
  void attention_in_blocks(int64_t layer);
  // Row t's query heads of KV heads [g0, g1) over cached positions [first,
  // last), out unnormalized with part's (max, sum) pairs ([heads][2]).
  void attend_range(int64_t layer, int64_t t, int64_t g0, int64_t g1, int64_t first, int64_t last, float* scratch,
                    float* out, float* part) const;
  void normalize_heads(int64_t heads, const float* part, float* out) const;

  const Model& model_;
  ThreadPool& pool_;
  const VectorOps& ops_;  // vectorized where the CPU allows (kernels/vector_ops.h)
  int64_t max_batch_;
  KvCacheType kv_type_;
  int64_t kv_block_;     // positions per block of the KV cache
  int64_t kv_blocks_;    // blocks per (sequence, layer)
  std::vector<int64_t> seq_pos_;  // [n_seq] positions held per sequence
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
  // [threads][scores_per_thread_]: attend_range's scores and, past part_at_,
  // its (max, sum) pairs; or attend_block's scratch.
  AlignedBuffer<float> scores_;
  int64_t scores_per_thread_ = 0, part_at_ = 0;
  // Prefill's attention (attention_in_blocks): one work item per KV head and
  // block of up to block_tokens_ consecutive rows of one sequence (whose query
  // heads fill at most kAttendBlockRows lanes; 0 when a group is too wide),
  // or per KV head and single row, dealt over the threads by cost.
  struct AttentionItem {
    int64_t t0, tokens, kv_head, cost;
  };
  static constexpr int64_t kMinBlockTokens = 4, kBlocksPerThread = 4;
  int64_t block_tokens_ = 0;
  std::vector<AttentionItem> attention_items_, dealt_items_;  // capacity B * n_head_kv each
  bool attention_blocks_ = false;  // this pass's attention goes by dealt_items_
  static constexpr int kMaxDealShares = 64;
  void deal_attention_items();
  // Attention split by positions (position_parts): per range, per token, the
  // unnormalized outputs [parts][tokens][Q] and (max, sum) pairs [parts][tokens][n_head][2].
  static constexpr int64_t kMaxPositionParts = 8, kSplitItemsPerThread = 4, kMinPartPositions = 64;
  int64_t position_parts(int64_t n) const;
  // The batch being evaluated, [B] each: token, sequence, position; the rows
  // whose logits are wanted; the fewest positions any row attends to.
  std::vector<int32_t> row_token_;
  std::vector<int64_t> row_seq_, row_pos_, logit_rows_;
  int64_t min_attended_ = 0;
  int64_t split_tokens_ = 0;
  AlignedBuffer<float> part_out_, part_max_sum_;
  AlignedBuffer<float> rope_cos_, rope_sin_;  // [B][n_rot / 2] for the batch's positions
  ActivationBatch act_;          // shared int8 quantization of xn_ / gate_
  // KV cache, [seq][layer][block][KV head][kv_block_][head_dim], in f16 (or
  // f32): each head's rows of a block contiguous (cache_offset); an f16 k
  // [kv_block_ / kKeySlab][head_dim][kKeySlab] in each head's place.
  AlignedBuffer<uint16_t> k_cache16_, v_cache16_;
  AlignedBuffer<float> k_cache32_, v_cache32_;
};

}  // namespace lowbit
