#include "runtime/model_quantizer.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/gguf.h"
#include "formats/gguf_writer.h"
#include "formats/llama2c.h"
#include "quant/i2s.h"
#include "runtime/gguf_metadata_copy.h"
#include "runtime/tensor_quantizer.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_llama2c.h"

namespace lowbit {

namespace {

enum class Role { Matrix, Embedding, Other };

Role role_of(const TensorSource& t) {
  if (t.name == "token_embd.weight" || t.name == "output.weight") return Role::Embedding;
  if (t.shape.size() == 2 && t.name.ends_with(".weight")) return Role::Matrix;
  return Role::Other;
}

// The llama.* keys, the tokenizer and the tensors of a llama2.c checkpoint,
// under llama.cpp's names. Shapes in ggml order: {row length, rows}.
std::vector<TensorSource> describe_llama2c(const Llama2cCheckpoint& ck, const std::string& tokenizer, GgufWriter& w) {
  if (tokenizer.empty())
    fail(ck.path(), ": a llama2.c checkpoint has no vocabulary; pass its tokenizer.bin with -z");
  const Llama2cConfig& c = ck.config();
  const Llama2cWeights& wt = ck.weights();
  const int64_t D = c.dim, F = c.hidden_dim, Dh = c.dim / c.n_heads, Q = c.n_heads * Dh, KV = c.n_kv_heads * Dh;
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", std::filesystem::path(ck.path()).stem().string());
  w.set_u32("llama.vocab_size", static_cast<uint32_t>(c.vocab_size));
  w.set_u32("llama.context_length", static_cast<uint32_t>(c.seq_len));
  w.set_u32("llama.embedding_length", static_cast<uint32_t>(D));
  w.set_u32("llama.block_count", static_cast<uint32_t>(c.n_layers));
  w.set_u32("llama.feed_forward_length", static_cast<uint32_t>(F));
  w.set_u32("llama.rope.dimension_count", static_cast<uint32_t>(Dh));
  w.set_u32("llama.attention.head_count", static_cast<uint32_t>(c.n_heads));
  w.set_u32("llama.attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);  // llama2.c's rmsnorm
  w.set_f32("llama.rope.freq_base", 10000.0f);                 // llama2.c's RoPE
  write_vocab_gguf(read_vocab_llama2c(tokenizer, c.vocab_size), w);

  std::vector<TensorSource> t;
  auto add = [&](std::string name, const float* data, std::vector<int64_t> shape) {
    t.push_back({std::move(name), GgmlType::F32, std::move(shape), reinterpret_cast<const uint8_t*>(data)});
  };
  add("token_embd.weight", wt.token_embedding, {D, c.vocab_size});
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string b = cat("blk.", l, ".");
    add(b + "attn_norm.weight", wt.rms_att + l * D, {D});
    add(b + "attn_q.weight", wt.wq + l * Q * D, {D, Q});
    add(b + "attn_k.weight", wt.wk + l * KV * D, {D, KV});
    add(b + "attn_v.weight", wt.wv + l * KV * D, {D, KV});
    add(b + "attn_output.weight", wt.wo + l * D * Q, {Q, D});
    add(b + "ffn_norm.weight", wt.rms_ffn + l * D, {D});
    add(b + "ffn_gate.weight", wt.w1 + l * F * D, {D, F});
    add(b + "ffn_down.weight", wt.w2 + l * D * F, {F, D});
    add(b + "ffn_up.weight", wt.w3 + l * F * D, {D, F});
  }
  add("output_norm.weight", wt.rms_final, {D});
  if (!c.shared_classifier) add("output.weight", wt.wcls, {D, c.vocab_size});
  return t;
}

int64_t block_of(GgmlType t) { return t == GgmlType::I2_S ? kI2SBlockSize : ggml_type_info(t).block_size; }

}  // namespace

uint32_t llama_file_type(GgmlType type) {
  switch (type) {
    case GgmlType::F32: return 0;
    case GgmlType::F16: return 1;
    case GgmlType::Q4_0: return 2;
    case GgmlType::Q4_1: return 3;
    case GgmlType::Q8_0: return 7;
    case GgmlType::Q5_0: return 8;
    case GgmlType::Q5_1: return 9;
    case GgmlType::IQ4_NL: return 25;
    case GgmlType::IQ4_XS: return 30;  // LLAMA_FTYPE_MOSTLY_IQ4_XS
    case GgmlType::Q2_K: return 10;  // LLAMA_FTYPE_MOSTLY_Q2_K
    case GgmlType::Q3_K: return 11;  // LLAMA_FTYPE_MOSTLY_Q3_K_S: Q3_K throughout
    case GgmlType::Q4_K: return 14;  // LLAMA_FTYPE_MOSTLY_Q4_K_S: Q4_K throughout
    case GgmlType::Q5_K: return 16;  // LLAMA_FTYPE_MOSTLY_Q5_K_S
    case GgmlType::Q6_K: return 18;  // LLAMA_FTYPE_MOSTLY_Q6_K
    case GgmlType::BF16: return 32;
    case GgmlType::TQ1_0: return 36;
    case GgmlType::TQ2_0: return 37;
    case GgmlType::I2_S: return 40;  // bitnet.cpp's LLAMA_FTYPE_MOSTLY_I2_S
    case GgmlType::Q1_0: return 40;  // upstream llama.cpp's LLAMA_FTYPE_MOSTLY_Q1_0
    case GgmlType::Q2_0: return 41;
    default: fail("no llama.cpp file type for ", ggml_type_name(type));
  }
}

QuantizeResult quantize_model(const std::string& input, const std::string& output, const QuantizeOptions& o,
                              ThreadPool& pool, const std::function<void(double)>& progress) {
  const auto& targets = quantize_target_types();
  if (std::find(targets.begin(), targets.end(), o.type) == targets.end())
    fail("quantize: lowbit does not write matrices of type ", ggml_type_name(o.type));
  if (o.embd_type &&
      (is_ternary_type(*o.embd_type) || std::find(targets.begin(), targets.end(), *o.embd_type) == targets.end())) {
    std::string allowed;
    for (GgmlType t : targets)
      if (!is_ternary_type(t)) allowed += (allowed.empty() ? "" : ", ") + std::string(ggml_type_name(t));
    fail("quantize: --embd-type ", ggml_type_name(*o.embd_type), " is not allowed: token_embd and output take ", allowed);
  }

  GgufWriter w;
  std::unique_ptr<GgufFile> gguf;
  std::unique_ptr<Llama2cCheckpoint> llama2c;
  std::vector<TensorSource> sources;
  bool is_gguf;
  {
    MappedFile probe(input);
    is_gguf = probe.size() >= 4 && std::memcmp(probe.data(), "GGUF", 4) == 0;
    if (!is_gguf && !Llama2cCheckpoint::looks_like(probe.data(), probe.size()))
      fail(input, ": neither a GGUF file nor a llama2.c checkpoint");
  }
  if (is_gguf) {
    gguf = std::make_unique<GgufFile>(input);
    copy_gguf_metadata(*gguf, w);
    for (const GgufTensorInfo& t : gguf->tensors()) sources.push_back({t.name, t.type, t.shape, t.data});
  } else {
    llama2c = std::make_unique<Llama2cCheckpoint>(input);
    sources = describe_llama2c(*llama2c, o.tokenizer, w);
  }
  // Replaces the input's value in place (the writer keeps a key's position).
  w.set_u32("general.file_type", llama_file_type(o.type));
  w.set_u32("general.quantization_version", 2);

  double total = 0, done = 0;
  for (const auto& s : sources) total += static_cast<double>(s.n_elements());
  QuantizeResult result;
  std::deque<std::vector<uint8_t>> buffers;  // converted tensors, alive until write()
  for (const TensorSource& s : sources) {
    const int64_t n = s.n_elements(), row = s.shape[0];
    const Role role = role_of(s);
    const GgmlType wanted = role == Role::Matrix ? o.type : role == Role::Embedding ? o.embd_type.value_or(s.type) : s.type;
    TensorOutcome oc{s.name, s.type, s.type, ""};
    const uint8_t* data = s.data;
    uint64_t bytes = static_cast<uint64_t>(ggml_tensor_bytes(s.type, n, row));
    result.bytes_in += bytes;
    if (wanted != s.type) {
      if (!is_float_type(s.type)) {
        oc.note = cat("already ", ggml_type_name(s.type), ", kept (lowbit quantizes from f32, f16 or bf16)");
      } else {
        oc.to = fit_type(wanted, row, s.type);
        if (oc.to != wanted)
          oc.note = cat("row length ", row, " is not a multiple of ", ggml_type_name(wanted), "'s ", block_of(wanted),
                        "; ", ggml_type_name(oc.to), is_ternary_type(wanted) ? " holding the ternarized values" : "");
        buffers.push_back(convert_tensor(s, oc.to, role == Role::Matrix && is_ternary_type(wanted), pool));
        data = buffers.back().data();
        bytes = buffers.back().size();
      }
    }
    w.add_tensor(s.name, oc.to, s.shape, data, bytes);
    result.bytes_out += bytes;
    result.tensors.push_back(std::move(oc));
    done += static_cast<double>(n);
    if (progress) progress(done / total);
  }
  w.write(output);
  return result;
}

}  // namespace lowbit
