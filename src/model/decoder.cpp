#include "model/decoder.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/timer.h"
#include "model/ops.h"

namespace lowbit {

Decoder::Decoder(const Model& model, ThreadPool& pool, int64_t max_batch, KvCacheType kv_type, int64_t n_seq,
                 int64_t kv_block)
    : model_(model),
      pool_(pool),
      ops_(best_vector_ops()),
      max_batch_(std::max<int64_t>(1, max_batch)),
      kv_type_(kv_type),
      // No larger than the context (rounded up to 64, as attend_block's chunks need).
      kv_block_(std::min((std::max<int64_t>(1, kv_block) + 63) / 64 * 64, (model.n_ctx() + 63) / 64 * 64)),
      kv_blocks_((model.n_ctx() + kv_block_ - 1) / kv_block_),
      seq_pos_(static_cast<size_t>(std::max<int64_t>(1, n_seq)), 0) {
  const ModelConfig& c = model.config();
  const int64_t B = max_batch_, D = c.n_embd, Q = c.q_dim(), KV = c.kv_dim(), F = c.n_ff;
  const auto sz = [](int64_t n) { return static_cast<size_t>(n); };
  x_ = AlignedBuffer<float>(sz(B * D));
  xn_ = AlignedBuffer<float>(sz(B * std::max(D, Q)));
  q_ = AlignedBuffer<float>(sz(B * Q));
  k_ = AlignedBuffer<float>(sz(B * KV));
  v_ = AlignedBuffer<float>(sz(B * KV));
  att_ = AlignedBuffer<float>(sz(B * Q));
  proj_ = AlignedBuffer<float>(sz(B * D));
  gate_ = AlignedBuffer<float>(sz(B * F));
  up_ = AlignedBuffer<float>(sz(B * F));
  const int64_t group = std::max<int64_t>(1, c.n_head / c.n_head_kv);
  block_tokens_ = kAttendBlockRows / group >= kMinBlockTokens ? kAttendBlockRows / group : 0;
  // attend_range: a group's scores over up to a block of positions, then
  // (max, sum) pairs for all heads.
  part_at_ = group * kv_block_;
  scores_per_thread_ = std::max(part_at_ + 2 * c.n_head, block_tokens_ > 0 ? attend_block_scratch(c.head_dim) : 0);
  scores_ = AlignedBuffer<float>(sz(pool.size() * scores_per_thread_));
  attention_items_.reserve(sz(B * c.n_head_kv));
  dealt_items_.reserve(sz(B * c.n_head_kv));
  rope_cos_ = AlignedBuffer<float>(sz(B * c.n_rot / 2));
  rope_sin_ = AlignedBuffer<float>(sz(B * c.n_rot / 2));
  act_ = ActivationBatch(B, std::max({D, Q, F}));
  // Attention split by positions (position_parts): at most kMaxPositionParts
  // ranges for at most split_tokens_ tokens.
  split_tokens_ = std::min<int64_t>(B, kSplitItemsPerThread * pool.size());
  part_out_ = AlignedBuffer<float>(sz(kMaxPositionParts * split_tokens_ * Q));
  part_max_sum_ = AlignedBuffer<float>(sz(kMaxPositionParts * split_tokens_ * c.n_head * 2));
  row_token_.resize(sz(B));
  row_seq_.resize(sz(B));
  row_pos_.resize(sz(B));
  logit_rows_.resize(sz(B));
  // The context length may come from the file (context_length), so the size
  // is checked in floating point before any int64 product can overflow, and
  // a cache the machine cannot give says which option makes it smaller.
  const int64_t elem = kv_type_ == KvCacheType::F16 ? 2 : 4;
  const double bytes = 2.0 * static_cast<double>(this->n_seq()) * static_cast<double>(c.n_layer) *
                       static_cast<double>(kv_blocks_) * static_cast<double>(kv_block_) * static_cast<double>(KV * elem);
  const auto too_large = [&](const std::string& why) {
    fail(model.path(), ": the KV cache of ", this->n_seq(), this->n_seq() == 1 ? " sequence" : " sequences", " of ",
         model.n_ctx(), " positions needs ", bytes / 1e9, " GB (", why, "); pass a smaller context with --ctx");
  };
  if (bytes > 0x1p62) too_large("more than can be addressed");
  // Pages of the caches are mapped (zeroed) when first written: a sequence
  // that stays short maps its first blocks' pages per layer for k and for v
  // (a huge page or two), not its whole context.
  const int64_t cache = this->n_seq() * c.n_layer * kv_blocks_ * kv_block_ * KV;
  try {
    if (kv_type_ == KvCacheType::F16) {
      k_cache16_ = AlignedBuffer<uint16_t>(sz(cache));
      v_cache16_ = AlignedBuffer<uint16_t>(sz(cache));
    } else {
      k_cache32_ = AlignedBuffer<float>(sz(cache));
      v_cache32_ = AlignedBuffer<float>(sz(cache));
    }
  } catch (const Error& e) {
    too_large(e.what());
  }
}

const char* DecodeProfile::stage_name(int stage) {
  static const char* const names[kStages] = {"norms, residual adds", "q, k, v matmuls", "rope, kv store, attention",
                                             "attn output matmul", "gate, up matmuls", "ffn activation",
                                             "down matmul", "output head", "embedding, other"};
  return stage >= 0 && stage < kStages ? names[stage] : "?";
}

void Decoder::end_stage(DecodeProfile::Stage stage, int64_t bytes) {
  if (profile_ == nullptr) return;
  const double now = now_seconds();
  profile_->seconds[stage] += now - stage_start_;
  profile_->weight_bytes[stage] += bytes;
  stage_start_ = now;
}

void Decoder::truncate(int64_t n, int64_t seq) {
  if (seq < 0 || seq >= n_seq()) fail("no sequence ", seq, " (the decoder holds ", n_seq(), ")");
  int64_t& pos = seq_pos_[static_cast<size_t>(seq)];
  if (n < 0 || n > pos) fail("cannot truncate a sequence of ", pos, " positions to ", n);
  pos = n;
}

// Head-major within blocks of positions, not position-major ([pos][KV]: on the
// 2B-4T model each head's 256 bytes a row among 1280). A thread attending to
// one KV head then reads one stream rather than a fifth of each of many rows:
// decode at 2 threads 4000 positions deep spent 18.2-18.7 ms per token in
// attention position-major, 14.7-14.9 head-major over the whole context, and
// 16.0 in blocks of 512 (1024: 15.5, 2048: 15.4; docs/performance.md,
// "Session 27"). Blocks rather than whole-context head regions keep a short
// sequence's pages few: the 5 heads' regions of a 4096-position context begin
// 1 MB apart, so a first token would map every huge page of the cache. A
// 5-token prompt's `lowbit run` peaked at 1.390 GB before, 1.574 GB in whole-
// context regions, 1.451 / 1.390 GB in blocks of 1024 / 512.
int64_t Decoder::cache_offset(int64_t seq, int64_t layer, int64_t g, int64_t pos) const {
  const ModelConfig& c = model_.config();
  const int64_t block = (seq * c.n_layer + layer) * kv_blocks_ + pos / kv_block_;
  return block * kv_block_stride() + (g * kv_block_ + pos % kv_block_) * c.head_dim;
}

int64_t Decoder::kv_block_stride() const { return kv_block_ * model_.config().kv_dim(); }

void Decoder::eval(const int32_t* tokens, int64_t n, float* logits, bool all_logits) {
  if (n <= 0) fail("nothing to evaluate: empty token list");
  if (seq_pos_[0] + n > model_.n_ctx())
    fail("context overflow: ", seq_pos_[0], " positions used + ", n, " new tokens > context length ", model_.n_ctx(),
         " (raise it with --ctx)");
  const int64_t V = model_.config().n_vocab;
  for (int64_t done = 0; done < n; done += max_batch_) {
    const int64_t chunk = std::min(max_batch_, n - done);
    const bool last = done + chunk == n;
    for (int64_t t = 0; t < chunk; ++t) {
      const auto i = static_cast<size_t>(t);
      row_token_[i] = tokens[done + t];
      row_seq_[i] = 0;
      row_pos_[i] = seq_pos_[0] + t;
      logit_rows_[i] = t;
    }
    min_attended_ = seq_pos_[0] + 1;
    if (all_logits) {
      eval_batch(chunk, logits + done * V, chunk);
    } else if (last) {
      logit_rows_[0] = chunk - 1;
      eval_batch(chunk, logits, 1);
    } else {
      eval_batch(chunk, nullptr, 0);
    }
    seq_pos_[0] += chunk;
  }
}

void Decoder::eval_rows(const BatchRow* rows, int64_t n, float* logits) {
  if (n <= 0) fail("nothing to evaluate: empty batch");
  if (n > max_batch_) fail("batch of ", n, " rows > the decoder's largest batch ", max_batch_);
  // Positions: each row at its sequence's next one. seq_pos_ moves only after
  // the pass, so a refused batch changes nothing.
  int64_t n_logits = 0;
  min_attended_ = model_.n_ctx();
  for (int64_t t = 0; t < n; ++t) {
    const BatchRow& r = rows[t];
    if (r.seq < 0 || r.seq >= n_seq()) fail("batch row ", t, ": no sequence ", r.seq, " (the decoder holds ", n_seq(), ")");
    int64_t pos = seq_pos_[static_cast<size_t>(r.seq)];
    for (int64_t u = 0; u < t; ++u) pos += rows[u].seq == r.seq;
    if (pos >= model_.n_ctx())
      fail("context overflow: sequence ", r.seq, " would need position ", pos, " of a context of ", model_.n_ctx(),
           " (raise it with --ctx)");
    const auto i = static_cast<size_t>(t);
    row_token_[i] = r.token;
    row_seq_[i] = r.seq;
    row_pos_[i] = pos;
    min_attended_ = std::min(min_attended_, pos + 1);
    if (r.logits) logit_rows_[static_cast<size_t>(n_logits++)] = t;
  }
  eval_batch(n, n_logits > 0 ? logits : nullptr, n_logits);
  for (int64_t t = 0; t < n; ++t) seq_pos_[static_cast<size_t>(rows[t].seq)] += 1;
}

void Decoder::matmul(const Linear& l, const ActivationBatch& in, float* y) { matmuls({&l}, in, {y}); }

template <size_t N>
void Decoder::matmuls(const Linear* const (&ls)[N], const ActivationBatch& in, float* const (&ys)[N]) {
  std::array<const Matmul*, N> ms;
  for (size_t i = 0; i < N; ++i) ms[i] = ls[i]->matmul.get();
  forward_together(ms, in, ys, pool_);
  for (size_t i = 0; i < N; ++i)
    if (ls[i]->out_scale != 1.0f) ops_.scale(ys[i], in.tokens() * ls[i]->matmul->rows(), ls[i]->out_scale);
}

void Decoder::make_input(float* out, int64_t n, int64_t dim, bool int8, FunctionRef<void(int64_t t)> make) {
  act_.set(out, n, dim);
  act_.make_rows(pool_, int8, make);
}

// RoPE on q and k, then each row's k and v into its sequence's cache at its
// position (an f16 k into its slab: key_slab_offset).
void Decoder::store_kv(int64_t layer, int64_t n) {
  const ModelConfig& c = model_.config();
  const int64_t Q = c.q_dim(), KV = c.kv_dim(), half = c.n_rot / 2;
  const bool interleaved = c.rope_style == RopeStyle::Interleaved;
  pool_.parallel_for(n, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      const float* cos = rope_cos_.data() + t * half;
      const float* sin = rope_sin_.data() + t * half;
      ops_.rope_rotate(q_.data() + t * Q, c.n_head, c.head_dim, c.n_rot, cos, sin, interleaved);
      ops_.rope_rotate(k_.data() + t * KV, c.n_head_kv, c.head_dim, c.n_rot, cos, sin, interleaved);
      for (int64_t g = 0; g < c.n_head_kv; ++g) {
        const int64_t seq = row_seq_[static_cast<size_t>(t)], pos = row_pos_[static_cast<size_t>(t)];
        const int64_t at = cache_offset(seq, layer, g, pos);
        const float* kt = k_.data() + t * KV + g * c.head_dim;
        const float* vt = v_.data() + t * KV + g * c.head_dim;
        if (kv_type_ == KvCacheType::F16) {
          ops_.to_f16(vt, v_cache16_.data() + at, c.head_dim);
          const int64_t in_block = pos % kv_block_;
          uint16_t* block = k_cache16_.data() + cache_offset(seq, layer, g, pos - in_block);
          uint16_t piece[256];
          for (int64_t d0 = 0; d0 < c.head_dim; d0 += 256) {
            const int64_t nd = std::min<int64_t>(256, c.head_dim - d0);
            ops_.to_f16(kt + d0, piece, nd);
            for (int64_t d = 0; d < nd; ++d) block[key_slab_offset(in_block, d0 + d, c.head_dim)] = piece[d];
          }
        } else {
          std::copy_n(kt, c.head_dim, k_cache32_.data() + at);
          std::copy_n(vt, c.head_dim, v_cache32_.data() + at);
        }
      }
    }
  });
}

void Decoder::attention(int64_t layer, int64_t n) {
  if (attention_blocks_) {  // prefill's runs of tokens
    attention_in_blocks(layer);
    return;
  }
  const ModelConfig& c = model_.config();
  const int64_t Dh = c.head_dim, Q = c.q_dim(), H_kv = c.n_head_kv;
  const int64_t group = c.n_head / c.n_head_kv;
  // A work item is a token, a range of its positions and its KV heads
  // (attend_range: the cache in memory order). With few tokens for the
  // threads (decode), each token's positions are split into `parts` ranges,
  // the ranges' softmax parts merged after. A range of whole blocks streams
  // them from end to end; one that starts or ends inside a block jumps at
  // each KV head's start. 4000 positions deep at 2 threads, attention took
  // 12.6-12.8 ms per token in 8 ranges of one block, against 16.6-16.7 with
  // the KV heads as the items (each head's blocks in turn); but cut to whole
  // blocks, 3 blocks share badly between 2 threads (1500 deep: 6.6 ms against
  // 5.8-5.9 cut evenly). docs/performance.md, "Session 28". Where there are
  // still fewer ranges than threads (a context too short to cut), each KV
  // head is an item of its own.
  const int64_t parts = position_parts(n);
  const int64_t runs = n * parts >= pool_.size() ? 1 : H_kv;  // runs of KV heads per range
  pool_.parallel_for(n * parts * runs, 1, [&](int64_t begin, int64_t end, int thread) {
    float* scratch = scores_.data() + thread * scores_per_thread_;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / (parts * runs), p = item / runs % parts, r = item % runs;
      const int64_t g0 = H_kv * r / runs, g1 = H_kv * (r + 1) / runs;
      const int64_t n_pos = row_pos_[static_cast<size_t>(t)] + 1;  // attends to positions 0 .. its own
      const auto bound = [&](int64_t i) {  // at the nearest block's start when each thread can have 2
        const int64_t at = n_pos * i / parts;
        return n_pos >= 2 * kv_block_ * pool_.size() ? std::min(n_pos, (at + kv_block_ / 2) / kv_block_ * kv_block_)
                                                     : at;
      };
      float* out = (parts == 1 ? att_.data() + t * Q : part_out_.data() + (p * n + t) * Q) + g0 * group * Dh;
      float* part = parts == 1 ? scratch + part_at_ : part_max_sum_.data() + ((p * n + t) * c.n_head + g0 * group) * 2;
      attend_range(layer, t, g0, g1, bound(p), p + 1 == parts ? n_pos : bound(p + 1), scratch, out, part);
      if (parts == 1) normalize_heads((g1 - g0) * group, part, out);
    }
  });
  if (parts == 1) return;
  pool_.parallel_for(n * H_kv, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / H_kv, head = item % H_kv * group;
      merge_attention_parts(part_out_.data() + t * Q + head * Dh, n * Q,
                            part_max_sum_.data() + (t * c.n_head + head) * 2, n * c.n_head * 2, parts, group, Dh,
                            att_.data() + t * Q + head * Dh);
    }
  });
}

// The query heads of KV heads [g0, g1) for row t over the positions [first,
// last) of its sequence's cache: block by block, the KV heads in turn within
// each, the order of the cache in memory ([block][KV head][position]), so
// that a thread with whole blocks streams them from end to end (the rows it
// prefetches past one head's lie at the start of the next head's). Each
// head's softmax carries from block to block in out and part (as
// VectorOps::attend_f16's, started here from (-inf, 0)); out is left
// unnormalized. scratch: scores_per_thread_ floats.
void Decoder::attend_range(int64_t layer, int64_t t, int64_t g0, int64_t g1, int64_t first, int64_t last,
                           float* scratch, float* out, float* part) const {
  const ModelConfig& c = model_.config();
  const int64_t Dh = c.head_dim, group = c.n_head / c.n_head_kv;
  const int64_t seq = row_seq_[static_cast<size_t>(t)];
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dh));
  for (int64_t h = 0; h < (g1 - g0) * group; ++h) part[2 * h] = -INFINITY, part[2 * h + 1] = 0.0f;
  for (int64_t from = first, to; from < last; from = to) {
    to = std::min(last, (from / kv_block_ + 1) * kv_block_);
    for (int64_t g = g0; g < g1; ++g) {
      const float* q = q_.data() + t * c.q_dim() + g * group * Dh;
      float* o = out + (g - g0) * group * Dh;
      float* p = part + (g - g0) * group * 2;
      const int64_t at = cache_offset(seq, layer, g, from);
      if (kv_type_ == KvCacheType::F16) {
        const int64_t k_at = cache_offset(seq, layer, g, from - from % kKeySlab);  // the slab holding `from`
        ops_.attend_f16(q, group, k_cache16_.data() + k_at, from % kKeySlab, v_cache16_.data() + at, Dh, to - from, Dh,
                        scale, scratch, o, p);
      } else {
        ops_.attend_f32(q, group, k_cache32_.data() + at, v_cache32_.data() + at, Dh, to - from, Dh, scale, scratch,
                        o, p);
      }
    }
  }
}

// out[h] /= part's sum for `heads` heads: attend_range's output normalized.
void Decoder::normalize_heads(int64_t heads, const float* part, float* out) const {
  const int64_t Dh = model_.config().head_dim;
  for (int64_t h = 0; h < heads; ++h)
    ops_.scale(out + h * Dh, Dh, static_cast<float>(1.0 / static_cast<double>(part[2 * h + 1])));
}

// Prefill's queries as blocks (VectorOps::attend_block_*): a block's rows
// read each cached k_j and v_j once, against once per row. The 2B-4T dummy at
// 2 threads spent 0.43 ms per token in attention one row at a time in pp512,
// 0.28 in blocks; 2048 positions deep, 4.5 ms and 2.1 (docs/performance.md,
// "Session 26"). The items depend on the batch alone: planned once per pass.
bool Decoder::plan_attention_blocks(int64_t n) {
  if (block_tokens_ == 0) return false;
  const int64_t H_kv = model_.config().n_head_kv;
  attention_items_.clear();
  bool any_block = false;
  for (int64_t t0 = 0, t1; t0 < n; t0 = t1) {  // runs of one sequence's rows
    for (t1 = t0 + 1; t1 < n && row_seq_[static_cast<size_t>(t1)] == row_seq_[static_cast<size_t>(t0)];) ++t1;
    // Blocks as large as allowed (each converts the cached rows it reads once)
    // while every thread still gets kBlocksPerThread of them.
    const int64_t per_thread = (t1 - t0) * H_kv / (kBlocksPerThread * pool_.size());
    const int64_t step = t1 - t0 >= kMinBlockTokens ? std::clamp(per_thread, kMinBlockTokens, block_tokens_) : 1;
    any_block |= step > 1;
    for (int64_t t = t0; t < t1; t += step) {
      const int64_t tokens = std::min(step, t1 - t);
      for (int64_t g = 0; g < H_kv; ++g)
        attention_items_.push_back({t, tokens, g, tokens * (row_pos_[static_cast<size_t>(t + tokens - 1)] + 1)});
    }
  }
  if (any_block) deal_attention_items();
  return any_block;
}

void Decoder::attention_in_blocks(int64_t layer) {
  const ModelConfig& c = model_.config();
  const int64_t Dh = c.head_dim, Q = c.q_dim(), group = c.n_head / c.n_head_kv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dh));
  pool_.parallel_for(static_cast<int64_t>(dealt_items_.size()), 1, [&](int64_t begin, int64_t end, int thread) {
    float* scratch = scores_.data() + thread * scores_per_thread_;
    for (int64_t i = begin; i < end; ++i) {
      const AttentionItem& it = dealt_items_[static_cast<size_t>(i)];
      if (it.tokens == 1) {
        const int64_t t = it.t0;
        float* out = att_.data() + t * Q + it.kv_head * group * Dh;
        float* part = scratch + part_at_;
        attend_range(layer, t, it.kv_head, it.kv_head + 1, 0, row_pos_[static_cast<size_t>(t)] + 1, scratch, out, part);
        normalize_heads(group, part, out);
        continue;
      }
      const int64_t head = it.kv_head * group;
      const int64_t at = cache_offset(row_seq_[static_cast<size_t>(it.t0)], layer, it.kv_head, 0);
      const AttendBlock block = {q_.data() + it.t0 * Q + head * Dh,
                                 Q,
                                 att_.data() + it.t0 * Q + head * Dh,
                                 Q,
                                 row_pos_.data() + it.t0,
                                 it.tokens,
                                 group,
                                 Dh,
                                 Dh,
                                 scale,
                                 kv_block_,
                                 kv_block_stride()};
      if (kv_type_ == KvCacheType::F16) {
        ops_.attend_block_f16(block, k_cache16_.data() + at, v_cache16_.data() + at, scratch);
      } else {
        ops_.attend_block_f32(block, k_cache32_.data() + at, v_cache32_.data() + at, scratch);
      }
    }
  });
}

// attention_items_ into dealt_items_ for the pool's shares (parallel_for
// starts thread i on the i-th contiguous run of items): costliest first, each
// to the share with the least cost so far that has room. So the shares start
// even, each runs its costly items first, and a steal from a share's end
// takes cheap ones.
void Decoder::deal_attention_items() {
  std::sort(attention_items_.begin(), attention_items_.end(),
            [](const AttentionItem& a, const AttentionItem& b) { return a.cost > b.cost; });
  const auto n = static_cast<int64_t>(attention_items_.size());
  const int threads = pool_.size();
  if (threads > kMaxDealShares) {  // costliest first is all
    dealt_items_.assign(attention_items_.begin(), attention_items_.end());
    return;
  }
  dealt_items_.resize(attention_items_.size());
  int64_t filled[kMaxDealShares] = {}, cost[kMaxDealShares] = {};
  for (const AttentionItem& it : attention_items_) {
    int best = -1;
    for (int s = 0; s < threads; ++s) {
      const bool room = ThreadPool::share_start(n, s, threads) + filled[s] < ThreadPool::share_start(n, s + 1, threads);
      if (room && (best < 0 || cost[s] < cost[best])) best = s;
    }
    dealt_items_[static_cast<size_t>(ThreadPool::share_start(n, best, threads) + filled[best]++)] = it;
    cost[best] += it.cost;
  }
}

// Position ranges per token for n tokens: 1 with one thread, when the tokens
// are many (kSplitItemsPerThread per thread: the remainder is a small share)
// or when too few positions are cached for the split to pay (kMinPartPositions
// a range); else up to kSplitItemsPerThread items per thread.
// Two threads, 5 KV heads of 4 query heads, 2048 positions, 30 layers: 5.32 ms
// split 3:2 by heads, 4.84 split by positions as well (one process, alternated).
int64_t Decoder::position_parts(int64_t n) const {
  const int64_t threads = pool_.size();
  if (threads == 1 || n >= kSplitItemsPerThread * threads || n > split_tokens_) return 1;
  const int64_t wanted = (kSplitItemsPerThread * threads + n - 1) / n;
  const int64_t most = std::clamp<int64_t>(min_attended_ / kMinPartPositions, 1, std::min(wanted, kMaxPositionParts));
  // The most parts that give every thread as many items (3 ranges on 2
  // threads left one idle half the time), else the most allowed.
  for (int64_t parts = most; parts > 1; --parts)
    if (n * parts % threads == 0) return parts;
  return most;
}

void Decoder::eval_batch(int64_t n, float* logits, int64_t n_logits) {
  using P = DecodeProfile;
  const ModelConfig& c = model_.config();
  const int64_t D = c.n_embd, Q = c.q_dim(), F = c.n_ff, half = c.n_rot / 2;
  float* x = x_.data();
  float* xn = xn_.data();
  if (profile_ != nullptr) {
    stage_start_ = now_seconds();
    profile_->tokens += n;
  }
  for (int64_t t = 0; t < n; ++t) {
    model_.embed(row_token_[static_cast<size_t>(t)], x + t * D);
    rope_angles(row_pos_[static_cast<size_t>(t)], c.rope_theta, c.n_rot, rope_cos_.data() + t * half, rope_sin_.data() + t * half);
  }
  end_stage(P::kOther);
  const auto gate_fn = c.ffn_act == FfnActivation::Silu ? ops_.silu_gate : ops_.relu2_gate;
  // Weight bytes per stage, only for a profile.
  const auto bytes = [&](const Linear& l) { return profile_ != nullptr ? l.matmul->weight_bytes() : 0; };

  attention_blocks_ = plan_attention_blocks(n);
  const float eps = c.rms_eps;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const LayerWeights& L = model_.layers()[static_cast<size_t>(l)];
    // Attention block, after the previous layer's residual add (proj_ holds
    // its feed-forward output).
    make_input(xn, n, D, reads_int8({&L.wq, &L.wk, &L.wv}), [&](int64_t t) {
      if (l > 0) ops_.add(x + t * D, proj_.data() + t * D, D);
      ops_.rms_norm(x + t * D, L.attn_norm.data(), D, eps, xn + t * D);
    });
    end_stage(P::kNorms);
    matmuls({&L.wq, &L.wk, &L.wv}, act_, {q_.data(), k_.data(), v_.data()});
    end_stage(P::kQkv, bytes(L.wq) + bytes(L.wk) + bytes(L.wv));
    store_kv(l, n);
    attention(l, n);
    end_stage(P::kAttention);
    float* att = att_.data();
    if (c.sub_norms) {
      make_input(att, n, Q, reads_int8({&L.wo}),
                 [&](int64_t t) { ops_.rms_norm(att + t * Q, L.attn_sub_norm.data(), Q, eps, att + t * Q); });
    } else {
      act_.set(att, n, Q);
    }
    end_stage(P::kNorms);
    matmul(L.wo, act_, proj_.data());
    end_stage(P::kAttnOut, bytes(L.wo));

    // Feed-forward block, after the attention's residual add.
    make_input(xn, n, D, reads_int8({&L.w_gate, &L.w_up}), [&](int64_t t) {
      ops_.add(x + t * D, proj_.data() + t * D, D);
      ops_.rms_norm(x + t * D, L.ffn_norm.data(), D, eps, xn + t * D);
    });
    end_stage(P::kNorms);
    matmuls({&L.w_gate, &L.w_up}, act_, {gate_.data(), up_.data()});
    end_stage(P::kGateUp, bytes(L.w_gate) + bytes(L.w_up));
    make_input(gate_.data(), n, F, reads_int8({&L.w_down}), [&](int64_t t) {
      float* g = gate_.data() + t * F;
      gate_fn(g, up_.data() + t * F, F);
      if (c.sub_norms) ops_.rms_norm(g, L.ffn_sub_norm.data(), F, eps, g);
    });
    end_stage(P::kFfnAct);
    matmul(L.w_down, act_, proj_.data());
    end_stage(P::kDown, bytes(L.w_down));
  }
  // The last layer's residual add (the others' went into the next layer's norm).
  if (c.n_layer > 0) {
    pool_.parallel_for(n, 1, [&](int64_t begin, int64_t end, int) {
      ops_.add(x + begin * D, proj_.data() + begin * D, (end - begin) * D);
    });
  }
  if (logits == nullptr || n_logits == 0) return;
  // The wanted rows, normed side by side.
  make_input(xn, n_logits, D, reads_int8({&model_.output()}), [&](int64_t t) {
    ops_.rms_norm(x + logit_rows_[static_cast<size_t>(t)] * D, model_.output_norm().data(), D, eps, xn + t * D);
  });
  end_stage(P::kNorms);
  matmul(model_.output(), act_, logits);
  end_stage(P::kHead, bytes(model_.output()));
}

}  // namespace lowbit
