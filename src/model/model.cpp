#include "model/model.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string_view>

#include "core/aligned_buffer.h"
#include "core/error.h"
#include "formats/gguf.h"
#include "formats/llama2c.h"
#include "kernels/dispatch.h"
#include "quant/weight_format.h"

namespace lowbit {

const char* architecture_name(Architecture a) {
  switch (a) {
    case Architecture::Llama:
      return "llama";
    case Architecture::BitNet:
      return "bitnet";
    case Architecture::BitNetB158:
      return "bitnet-b1.58";
  }
  return "?";
}

Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string& path, const LoadOptions& options, ThreadPool& pool) {
  std::unique_ptr<Model> m(new Model());
  m->path_ = path;
  bool is_gguf = false;
  {
    MappedFile probe(path);
    if (probe.size() >= 4 && std::memcmp(probe.data(), "GGUF", 4) == 0) {
      is_gguf = true;
    } else if (!Llama2cCheckpoint::looks_like(probe.data(), probe.size())) {
      fail(path, ": neither a GGUF file nor a llama2.c checkpoint");
    }
  }
  try {
    HugePageScope huge_pages;  // repacked matrices, packed into huge pages (core/aligned_buffer.h)
    if (is_gguf) {
      m->gguf_ = std::make_unique<GgufFile>(path);
      m->load_gguf(options, pool);
    } else {
      m->llama2c_ = std::make_unique<Llama2cCheckpoint>(path);
      m->load_llama2c(options, pool);
    }
  } catch (const Error& e) {
    // The kernels' refusals (a weight that is not ternary, a NaN scale) name
    // the tensor, not the file it came from: add it.
    if (std::string_view(e.what()).starts_with(path)) throw;
    fail(path, ": ", e.what());
  }
  m->embedding_file_ = std::make_unique<PositionalFile>(path);
  m->embedding_scale_ =
      tensor_scale(m->embedding_.type, m->embedding_.data, m->embedding_.rows * m->embedding_.cols);
  m->n_ctx_ = options.n_ctx > 0 ? options.n_ctx : m->config_.n_ctx_train;
  if (m->n_ctx_ <= 0) fail(path, ": context length is ", m->n_ctx_, "; pass one with --ctx");
  if (options.verbose) std::fprintf(stderr, "%s", m->describe_kernels().c_str());
  return m;
}

namespace {

// Reads a norm vector of n floats from any float-like tensor type.
std::vector<float> read_vector(const GgufFile& f, const std::string& name, int64_t n) {
  const GgufTensorInfo& t = f.tensor(name);
  if (t.n_elements != n || t.shape.size() != 1)
    fail(f.path(), ": tensor '", name, "' has ", t.n_elements, " elements in ", t.shape.size(),
         " dimensions, expected a vector of ", n);
  const WeightFormat& fmt = weight_format(t.type);
  std::vector<float> v(static_cast<size_t>(n));
  fmt.dequantize_row(t.data, v.data(), n);
  // One NaN or infinity in a norm or scale makes every logit NaN; these are
  // small enough to check whole (the big matrices are not scanned).
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      fail(f.path(), ": tensor '", name, "' element ", i, " is ", v[i], " (a norm or scale must be finite)");
  return v;
}

// Drops this process's pages of [p, p + bytes), a tensor in the file's
// read-only mapping, once its weights are repacked into memory the kernel owns
// (design.md rule 3): the resident size is then the kernel layouts, not the
// layouts plus the file. Always safe: whatever still reads the range in place
// (embedding rows, the "ref" kernel) faults its pages back in from the page
// cache on first use. Only whole pages inside the range go, so neighbouring
// tensors are untouched.
void drop_file_pages(const uint8_t* p, int64_t bytes) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes)) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += cat(i ? ", " : "", shape[i]);
  return s + "]";
}

}  // namespace

void Model::load_gguf(const LoadOptions& options, ThreadPool& pool) {
  const GgufFile& f = *gguf_;
  ModelConfig& c = config_;
  c.arch_name = std::string(f.get_string("general.architecture"));
  if (c.arch_name == "llama") {
    c.arch = Architecture::Llama;
  } else if (c.arch_name == "bitnet") {
    c.arch = Architecture::BitNet;
  } else if (c.arch_name == "bitnet-b1.58" || c.arch_name == "bitnet-25") {
    c.arch = Architecture::BitNetB158;
  } else {
    fail(f.path(), ": architecture '", c.arch_name, "' is not supported (llama, bitnet, bitnet-b1.58, bitnet-25)");
  }
  const std::string p = c.arch_name + ".";
  c.n_embd = static_cast<int64_t>(f.get_uint(p + "embedding_length"));
  c.n_layer = static_cast<int64_t>(f.get_uint(p + "block_count"));
  c.n_ff = static_cast<int64_t>(f.get_uint(p + "feed_forward_length"));
  c.n_head = static_cast<int64_t>(f.get_uint(p + "attention.head_count"));
  c.n_head_kv = static_cast<int64_t>(f.get_uint_opt(p + "attention.head_count_kv").value_or(c.n_head));
  c.n_ctx_train = static_cast<int64_t>(f.get_uint_opt(p + "context_length").value_or(0));
  // NaN, infinite or negative values here make every logit NaN (or the RoPE
  // angles meaningless) without a word: refuse them, naming the key. Checked
  // as read (a float64), before the float they become.
  const auto finite_float = [&](const std::string& key, double fallback, bool zero_ok) {  // > 0 (>= 0 if zero_ok)
    const double v = f.get_float_opt(key).value_or(fallback);
    if (!(std::isfinite(v) && std::abs(v) <= FLT_MAX && (v > 0 || (zero_ok && v == 0))))
      fail(f.path(), ": ", key, " = ", v, " must be a finite float ", zero_ok ? ">= 0" : "above 0");
    return static_cast<float>(v);
  };
  c.rope_theta = finite_float(p + "rope.freq_base", 10000.0, false);
  c.rms_eps = finite_float(p + "attention.layer_norm_rms_epsilon", 1e-5, true);
  auto limit = [&](const char* what, int64_t v, int64_t max) {
    if (v <= 0 || v > max) fail(f.path(), ": ", p, what, " = ", v, " is outside 1..", max);
  };
  limit("embedding_length", c.n_embd, 1 << 17);
  limit("block_count", c.n_layer, 4096);
  limit("feed_forward_length", c.n_ff, 1 << 20);
  limit("attention.head_count", c.n_head, c.n_embd);
  limit("attention.head_count_kv", c.n_head_kv, c.n_head);
  if (c.n_head % c.n_head_kv != 0)
    fail(f.path(), ": head_count ", c.n_head, " is not a multiple of head_count_kv ", c.n_head_kv);
  c.head_dim = static_cast<int64_t>(f.get_uint_opt(p + "attention.key_length").value_or(c.n_embd / c.n_head));
  limit("attention.key_length", c.head_dim, 1 << 12);
  c.n_rot = static_cast<int64_t>(f.get_uint_opt(p + "rope.dimension_count").value_or(c.head_dim));
  if (c.n_rot <= 0 || c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
    // Name where the head size comes from: a bad head_count shows up here first.
    const std::string head_dim_from = f.has(p + "attention.key_length")
                                          ? p + "attention.key_length"
                                          : "embedding_length " + std::to_string(c.n_embd) + " / head_count " +
                                                std::to_string(c.n_head);
    fail(f.path(), ": ", p, "rope.dimension_count = ", c.n_rot, " must be even and in 2..", c.head_dim,
         " (the head size, from ", head_dim_from, ")");
  }

  const bool bitnet = c.arch != Architecture::Llama;
  c.sub_norms = bitnet;
  c.rope_style = bitnet ? RopeStyle::HalfSplit : RopeStyle::Interleaved;
  c.ffn_act = c.arch == Architecture::BitNetB158 ? FfnActivation::SquaredRelu : FfnActivation::Silu;
  const ModelShape& b2b4t = find_model_shape("bitnet-2b4t");
  if (c.arch == Architecture::BitNet && c.n_embd == b2b4t.n_embd && c.n_layer == b2b4t.n_layer &&
      c.n_ff == b2b4t.n_ff && c.n_head_kv == b2b4t.n_head_kv) {
    c.ffn_act = FfnActivation::SquaredRelu;
    if (!options.ffn_act)
      std::fprintf(stderr,
                   "lowbit: warning: %s says 'bitnet' but has BitNet b1.58 2B-4T's shape; using its squared-ReLU "
                   "FFN (--ffn-act silu to override)\n",
                   f.path().c_str());
  }
  if (options.ffn_act) c.ffn_act = *options.ffn_act;

  // Token embedding: [D] rows, V of them. Its row count is the vocabulary.
  const GgufTensorInfo& emb = f.tensor("token_embd.weight");
  if (emb.shape.size() != 2 || emb.shape[0] != c.n_embd)
    fail(f.path(), ": tensor 'token_embd.weight' has shape ", shape_string(emb.shape), ", expected [", c.n_embd,
         ", n_vocab]");
  c.n_vocab = emb.shape[1];
  if (auto v = f.get_uint_opt(p + "vocab_size"); v && static_cast<int64_t>(*v) != c.n_vocab)
    fail(f.path(), ": ", p, "vocab_size = ", *v, " but token_embd.weight has ", c.n_vocab, " rows");
  if (find_weight_format(emb.type) == nullptr)
    fail(f.path(), ": tensor 'token_embd.weight' has type ", ggml_type_name(emb.type),
         ", which lowbit cannot read");
  embedding_ = {emb.name, emb.type, c.n_vocab, c.n_embd, emb.data};
  embedding_offset_ = static_cast<int64_t>(f.data_offset() + emb.offset);

  auto linear = [&](const std::string& name, int64_t rows, int64_t cols, bool required = true) {
    Linear l;
    const GgufTensorInfo* t = f.find_tensor(name);
    if (t == nullptr) {
      if (required) fail(f.path(), ": tensor '", name, "' is missing");
      return l;
    }
    if (t->shape.size() != 2 || t->shape[0] != cols || t->shape[1] != rows)
      fail(f.path(), ": tensor '", name, "' has shape ", shape_string(t->shape), ", expected [", cols, ", ", rows,
           "]");
    l.matmul = make_matmul({name, t->type, rows, cols, t->data}, options.kernel, pool);
    drop_file_pages(t->data, static_cast<int64_t>(t->bytes));
    kernel_log_.push_back(cat(name, " ", ggml_type_name(t->type), " ", rows, "x", cols, " -> ",
                              l.matmul->kernel_name()));
    const std::string scale_name = name.substr(0, name.size() - std::strlen("weight")) + "scale";
    if (f.find_tensor(scale_name) != nullptr) l.out_scale = read_vector(f, scale_name, 1)[0];
    return l;
  };

  // Every tensor's pages, after each layer and at the end: dropping a tensor's
  // own range (in `linear`) leaves what the kernel mapped around it (fault-
  // around and large page-cache folios reach into neighbours already dropped)
  // and the small tensors read in place (norms, scales). Measured on the
  // 2B-4T dummy with a Q8_0 head: 140 MB of file pages left resident, peak
  // RSS file + 20% instead of + 11%. Safe as drop_file_pages is.
  const uint8_t* const data_section = emb.data - emb.offset;
  const auto drop_all_file_pages = [&] {
    drop_file_pages(data_section, static_cast<int64_t>(f.file_size() - f.data_offset()));
  };

  const int64_t D = c.n_embd, Q = c.q_dim(), KV = c.kv_dim(), F = c.n_ff;
  // The head first: while a matrix is repacked its file pages and its copy are
  // both resident, so the peak is lowest when the largest goes before the rest.
  output_ = linear("output.weight", c.n_vocab, D, /*required=*/false);
  if (!output_.matmul) {
    output_.matmul = make_matmul(embedding_, options.kernel, pool);
    drop_file_pages(emb.data, static_cast<int64_t>(emb.bytes));
    kernel_log_.push_back(cat("output (tied token_embd.weight) ", ggml_type_name(emb.type), " ", c.n_vocab, "x",
                              D, " -> ", output_.matmul->kernel_name()));
  }
  layers_.resize(static_cast<size_t>(c.n_layer));
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string b = cat("blk.", i, ".");
    LayerWeights& L = layers_[static_cast<size_t>(i)];
    L.attn_norm = read_vector(f, b + "attn_norm.weight", D);
    L.wq = linear(b + "attn_q.weight", Q, D);
    L.wk = linear(b + "attn_k.weight", KV, D);
    L.wv = linear(b + "attn_v.weight", KV, D);
    L.wo = linear(b + "attn_output.weight", D, Q);
    L.ffn_norm = read_vector(f, b + "ffn_norm.weight", D);
    L.w_gate = linear(b + "ffn_gate.weight", F, D);
    L.w_up = linear(b + "ffn_up.weight", F, D);
    L.w_down = linear(b + "ffn_down.weight", D, F);
    if (c.sub_norms) {
      L.attn_sub_norm = read_vector(f, b + "attn_sub_norm.weight", Q);
      L.ffn_sub_norm = read_vector(f, b + "ffn_sub_norm.weight", F);
    }
    drop_all_file_pages();
  }
  output_norm_ = read_vector(f, "output_norm.weight", D);
  drop_all_file_pages();
}

void Model::load_llama2c(const LoadOptions& options, ThreadPool& pool) {
  const Llama2cConfig& lc = llama2c_->config();
  const Llama2cWeights& w = llama2c_->weights();
  ModelConfig& c = config_;
  c.arch = Architecture::Llama;
  c.arch_name = "llama2.c";
  c.n_embd = lc.dim;
  c.n_layer = lc.n_layers;
  c.n_head = lc.n_heads;
  c.n_head_kv = lc.n_kv_heads;
  c.head_dim = lc.dim / lc.n_heads;
  c.n_rot = c.head_dim;
  c.n_ff = lc.hidden_dim;
  c.n_vocab = lc.vocab_size;
  c.n_ctx_train = lc.seq_len;
  c.rope_theta = 10000.0f;
  c.rope_style = RopeStyle::Interleaved;
  c.rms_eps = 1e-5f;
  c.ffn_act = options.ffn_act.value_or(FfnActivation::Silu);

  const int64_t D = c.n_embd, Q = c.q_dim(), KV = c.kv_dim(), F = c.n_ff;
  auto as_bytes = [](const float* p) { return reinterpret_cast<const uint8_t*>(p); };
  auto linear = [&](const std::string& name, const float* data, int64_t rows, int64_t cols) {
    Linear l;
    l.matmul = make_matmul({name, GgmlType::F32, rows, cols, as_bytes(data)}, options.kernel, pool);
    kernel_log_.push_back(cat(name, " f32 ", rows, "x", cols, " -> ", l.matmul->kernel_name()));
    return l;
  };
  layers_.resize(static_cast<size_t>(c.n_layer));
  for (int64_t i = 0; i < c.n_layer; ++i) {
    LayerWeights& L = layers_[static_cast<size_t>(i)];
    const std::string b = cat("layer ", i, " ");
    L.attn_norm.assign(w.rms_att + i * D, w.rms_att + (i + 1) * D);
    L.wq = linear(b + "wq", w.wq + i * Q * D, Q, D);
    L.wk = linear(b + "wk", w.wk + i * KV * D, KV, D);
    L.wv = linear(b + "wv", w.wv + i * KV * D, KV, D);
    L.wo = linear(b + "wo", w.wo + i * D * Q, D, Q);
    L.ffn_norm.assign(w.rms_ffn + i * D, w.rms_ffn + (i + 1) * D);
    L.w_gate = linear(b + "w1", w.w1 + i * F * D, F, D);
    L.w_down = linear(b + "w2", w.w2 + i * D * F, D, F);
    L.w_up = linear(b + "w3", w.w3 + i * F * D, F, D);
  }
  output_norm_.assign(w.rms_final, w.rms_final + D);
  embedding_ = {"token_embedding_table", GgmlType::F32, c.n_vocab, D, as_bytes(w.token_embedding)};
  embedding_offset_ = llama2c_->file_offset(w.token_embedding);
  output_ = linear("wcls", w.wcls, c.n_vocab, D);
}

void Model::embed(int32_t token, float* x) const {
  if (token < 0 || token >= config_.n_vocab)
    fail(path_, ": token id ", token, " is outside the vocabulary [0, ", config_.n_vocab, ")");
  const WeightFormat& fmt = weight_format(embedding_.type);
  const int64_t row = row_offset(embedding_.type, embedding_.cols, token);
  // One buffer per thread, grown once: no allocation per token.
  thread_local std::vector<uint8_t> bytes;
  const auto n = static_cast<size_t>(ggml_row_bytes(embedding_.type, embedding_.cols));
  if (bytes.size() < n) bytes.resize(n);
  embedding_file_->read_exact(bytes.data(), static_cast<int64_t>(n), embedding_offset_ + row);
  fmt.dequantize_row(bytes.data(), x, embedding_.cols);
  if (embedding_scale_ != 1.0f)
    for (int64_t i = 0; i < embedding_.cols; ++i) x[i] *= embedding_scale_;
}

int64_t Model::weight_bytes_per_token() const {
  int64_t bytes = ggml_row_bytes(embedding_.type, embedding_.cols);
  for (const auto& L : layers_)
    for (const Linear* l : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      bytes += l->matmul->weight_bytes();
  return bytes + output_.matmul->weight_bytes();
}

std::string Model::describe_kernels() const {
  std::string s;
  for (const auto& line : kernel_log_) s += "lowbit: kernel: " + line + "\n";
  return s;
}

}  // namespace lowbit
