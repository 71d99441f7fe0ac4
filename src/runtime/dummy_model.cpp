#include "runtime/dummy_model.h"

#include <cmath>
#include <cstdlib>
#include <deque>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "formats/gguf_writer.h"
#include "model/model_shapes.h"
#include "quant/i2s.h"
#include "quant/weight_format.h"
#include "tokenizer/synthetic_vocab.h"
#include "tokenizer/vocab_gguf.h"

namespace lowbit {

namespace {

// llama.cpp's general.file_type for a model whose matrices are mostly `type`.
uint32_t file_type_of(GgmlType type) {
  switch (type) {
    case GgmlType::F16:
      return 1;
    case GgmlType::Q8_0:
      return 7;
    case GgmlType::TQ1_0:
      return 36;
    case GgmlType::TQ2_0:
      return 37;
    case GgmlType::I2_S:
      return 40;  // bitnet.cpp's LLAMA_FTYPE_MOSTLY_I2_S
    default:
      fail("gen-model cannot write matrices of type ", ggml_type_name(type));
  }
}

// Seeds one row's generator from (seed, tensor, row): any thread may make any row.
Rng row_rng(uint64_t seed, uint64_t tensor, uint64_t row) {
  return Rng(seed * 0x9e3779b97f4a7c15ull ^ (tensor << 40) ^ row);
}

class TensorStore {
 public:
  explicit TensorStore(GgufWriter& w) : writer_(w) {}
  uint8_t* add(const std::string& name, GgmlType type, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const int64_t bytes = ggml_tensor_bytes(type, n, shape[0]);
    buffers_.emplace_back(static_cast<size_t>(bytes));
    writer_.add_tensor(name, type, shape, buffers_.back().data(), static_cast<uint64_t>(bytes));
    return buffers_.back().data();
  }

 private:
  GgufWriter& writer_;
  std::deque<std::vector<uint8_t>> buffers_;
};

}  // namespace

std::string default_model_path(const DummyModelOptions& o) {
  std::string dir;
  if (const char* c = std::getenv("LOWBIT_CACHE"); c && *c) {
    dir = c;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::string(x) + "/lowbit";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::string(h) + "/.cache/lowbit";
  } else {
    dir = ".cache/lowbit";
  }
  return cat(dir, "/dummy-", o.shape, "-", ggml_type_name(o.type), "-head-", ggml_type_name(o.head_type), "-seed",
             o.seed, ".gguf");
}

void write_dummy_model(const DummyModelOptions& o, const std::string& path, ThreadPool& pool,
                       const std::function<void(double)>& progress) {
  const ModelShape& s = find_model_shape(o.shape);
  const uint32_t file_type = file_type_of(o.type);
  if (o.head_type != GgmlType::F16 && o.head_type != GgmlType::Q8_0 && o.head_type != GgmlType::Q6_K)
    fail("gen-model: head type must be f16, q8_0 or q6_k, got ", ggml_type_name(o.head_type));

  GgufWriter w;
  const std::string a = s.architecture + ".";
  w.set_string("general.architecture", s.architecture);
  w.set_string("general.name", cat("lowbit dummy ", s.name, " (random ternary weights)"));
  w.set_u32("general.file_type", file_type);
  w.set_u32("general.quantization_version", 2);
  w.set_u32(a + "vocab_size", static_cast<uint32_t>(s.n_vocab));
  w.set_u32(a + "context_length", static_cast<uint32_t>(s.n_ctx));
  w.set_u32(a + "embedding_length", static_cast<uint32_t>(s.n_embd));
  w.set_u32(a + "block_count", static_cast<uint32_t>(s.n_layer));
  w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(s.head_dim));
  w.set_u32(a + "attention.head_count", static_cast<uint32_t>(s.n_head));
  w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  if (s.head_dim * s.n_head != s.n_embd) {
    w.set_u32(a + "attention.key_length", static_cast<uint32_t>(s.head_dim));
    w.set_u32(a + "attention.value_length", static_cast<uint32_t>(s.head_dim));
  }
  w.set_f32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
  w.set_f32(a + "rope.freq_base", s.rope_theta);
  const Vocab vocab = s.bpe_vocab ? make_synthetic_bpe_vocab(static_cast<int32_t>(s.n_vocab), 256,
                                                             static_cast<int32_t>(s.n_merges), o.seed)
                                  : make_synthetic_spm_vocab(static_cast<int32_t>(s.n_vocab), o.seed);
  write_vocab_gguf(vocab, w);

  TensorStore store(w);
  const int64_t D = s.n_embd, Q = s.n_head * s.head_dim, KV = s.n_head_kv * s.head_dim, F = s.n_ff;
  // Total elements, for the progress bar.
  const double total = static_cast<double>(s.n_vocab * D * (s.tied_output ? 1 : 2) +
                                           s.n_layer * (Q * D * 2 + KV * D * 2 + F * D * 3));
  double done = 0;
  auto advance = [&](int64_t n) {
    done += static_cast<double>(n);
    if (progress) progress(done / total);
  };
  uint64_t tensor_id = 0;

  // A float matrix [rows][cols] of uniform values in [-amp, amp], stored as head_type.
  auto float_matrix = [&](const std::string& name, int64_t rows, int64_t cols, float amp) {
    const WeightFormat& fmt = weight_format(o.head_type);
    uint8_t* dst = store.add(name, o.head_type, {cols, rows});
    const int64_t row_bytes = ggml_row_bytes(o.head_type, cols);
    const uint64_t id = tensor_id++;
    pool.parallel_for(rows, 256, [&](int64_t begin, int64_t end, int) {
      std::vector<float> row(static_cast<size_t>(cols));
      for (int64_t r = begin; r < end; ++r) {
        Rng rng = row_rng(o.seed, id, static_cast<uint64_t>(r));
        for (auto& v : row) v = (2.0f * rng.uniform_f() - 1.0f) * amp;
        fmt.quantize_row(row.data(), dst + r * row_bytes, cols);
      }
    });
    advance(rows * cols);
  };
  // A ternary matrix w = scale * t, t uniform over {-1, 0, +1}, scale chosen so
  // a unit-variance input gives a roughly unit-variance output.
  auto ternary_matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
    const uint64_t id = tensor_id++;
    Rng scale_rng = row_rng(o.seed, id, ~0ull);
    const float scale = static_cast<float>((0.8 + 0.4 * scale_rng.uniform()) / std::sqrt(cols * 2.0 / 3.0));
    uint8_t* dst = store.add(name, o.type, {cols, rows});
    std::vector<int8_t> trits;
    if (o.type == GgmlType::I2_S) trits.resize(static_cast<size_t>(rows * cols));
    const WeightFormat* fmt = o.type == GgmlType::I2_S ? nullptr : &weight_format(o.type);
    const int64_t row_bytes = ggml_row_bytes(o.type, cols);
    pool.parallel_for(rows, 64, [&](int64_t begin, int64_t end, int) {
      std::vector<float> row(static_cast<size_t>(cols));
      for (int64_t r = begin; r < end; ++r) {
        Rng rng = row_rng(o.seed, id, static_cast<uint64_t>(r));
        for (int64_t k = 0; k < cols; ++k) {
          const int t = static_cast<int>((static_cast<uint64_t>(rng.next_u32()) * 3) >> 32) - 1;
          if (fmt == nullptr) {
            trits[static_cast<size_t>(r * cols + k)] = static_cast<int8_t>(t);
          } else {
            row[static_cast<size_t>(k)] = scale * static_cast<float>(t);
          }
        }
        if (fmt != nullptr) fmt->quantize_row(row.data(), dst + r * row_bytes, cols);
      }
    });
    if (fmt == nullptr) pack_i2s(trits.data(), rows * cols, scale, dst);
    advance(rows * cols);
  };
  auto norm = [&](const std::string& name, int64_t n) {
    float* dst = reinterpret_cast<float*>(store.add(name, GgmlType::F32, {n}));
    Rng rng = row_rng(o.seed, tensor_id++, 0);
    for (int64_t i = 0; i < n; ++i) dst[i] = 0.9f + 0.2f * rng.uniform_f();
  };

  float_matrix("token_embd.weight", s.n_vocab, D, 0.05f);
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string b = cat("blk.", l, ".");
    norm(b + "attn_norm.weight", D);
    ternary_matrix(b + "attn_q.weight", Q, D);
    ternary_matrix(b + "attn_k.weight", KV, D);
    ternary_matrix(b + "attn_v.weight", KV, D);
    if (s.sub_norms) norm(b + "attn_sub_norm.weight", Q);
    ternary_matrix(b + "attn_output.weight", D, Q);
    norm(b + "ffn_norm.weight", D);
    ternary_matrix(b + "ffn_gate.weight", F, D);
    ternary_matrix(b + "ffn_up.weight", F, D);
    if (s.sub_norms) norm(b + "ffn_sub_norm.weight", F);
    ternary_matrix(b + "ffn_down.weight", D, F);
  }
  norm("output_norm.weight", D);
  if (!s.tied_output) float_matrix("output.weight", s.n_vocab, D, 0.05f);
  w.write(path);
}

}  // namespace lowbit
