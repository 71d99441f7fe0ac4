#include "formats/llama2c.h"

#include <cstdint>
#include <cstring>

#include "core/error.h"

namespace lowbit {

namespace {

constexpr uint32_t kMagicV1 = 0x616b3432;  // "ak42"
constexpr int32_t kMaxDim = 1 << 16;        // generous: no real model comes near
constexpr int32_t kMaxLayers = 1024;
constexpr int32_t kMaxVocab = 1 << 22;
constexpr int32_t kMaxSeq = 1 << 22;

int32_t read_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

bool Llama2cCheckpoint::looks_like(const uint8_t* data, size_t size) {
  if (size < 28) return false;
  if (std::memcmp(data, "GGUF", 4) == 0) return false;
  uint32_t magic;
  std::memcpy(&magic, data, 4);
  if (magic == kMagicV1) return true;
  const int32_t dim = read_i32(data), hidden = read_i32(data + 4), layers = read_i32(data + 8);
  return dim > 0 && dim <= kMaxDim && hidden > 0 && layers > 0 && layers <= kMaxLayers;
}

Llama2cCheckpoint::Llama2cCheckpoint(const std::string& path) : file_(path) {
  const uint8_t* data = file_.data();
  const size_t size = file_.size();
  size_t header = 0;
  uint32_t magic = 0;
  if (size >= 4) std::memcpy(&magic, data, 4);
  const uint8_t* cfg = data;
  if (magic == kMagicV1) {
    if (size < 256) fail(path, ": llama2.c v1 header needs 256 bytes, file has ", size);
    version_ = read_i32(data + 4);
    if (version_ != 1)
      fail(path, ": llama2.c checkpoint version ", version_, " is not supported (float32 versions 0 and 1 are)");
    cfg = data + 8;
    header = 256;
  } else {
    if (size < 28) fail(path, ": too short for a llama2.c header (", size, " bytes, need 28)");
    header = 28;
  }
  Llama2cConfig& c = config_;
  c.dim = read_i32(cfg);
  c.hidden_dim = read_i32(cfg + 4);
  c.n_layers = read_i32(cfg + 8);
  c.n_heads = read_i32(cfg + 12);
  c.n_kv_heads = read_i32(cfg + 16);
  c.vocab_size = read_i32(cfg + 20);
  c.seq_len = read_i32(cfg + 24);
  if (version_ == 1) {
    c.shared_classifier = cfg[28] != 0;
  } else {
    c.shared_classifier = c.vocab_size > 0;
    // INT32_MIN has no negation: left as it is, refused below as out of range.
    if (c.vocab_size < 0 && c.vocab_size != INT32_MIN) c.vocab_size = -c.vocab_size;
  }
  auto check = [&](const char* field, int32_t v, int32_t max) {
    if (v <= 0 || v > max) fail(path, ": header field ", field, " = ", v, " is outside 1..", max);
  };
  check("dim", c.dim, kMaxDim);
  check("hidden_dim", c.hidden_dim, kMaxDim * 8);
  check("n_layers", c.n_layers, kMaxLayers);
  check("n_heads", c.n_heads, c.dim);
  check("n_kv_heads", c.n_kv_heads, c.n_heads);
  check("vocab_size", c.vocab_size, kMaxVocab);
  check("seq_len", c.seq_len, kMaxSeq);
  if (c.dim % c.n_heads != 0) fail(path, ": dim ", c.dim, " is not a multiple of n_heads ", c.n_heads);
  if (c.n_heads % c.n_kv_heads != 0)
    fail(path, ": n_heads ", c.n_heads, " is not a multiple of n_kv_heads ", c.n_kv_heads);
  const int64_t head = c.dim / c.n_heads;
  const int64_t kv_dim = head * c.n_kv_heads;
  const int64_t L = c.n_layers, D = c.dim, H = c.hidden_dim, V = c.vocab_size;

  // Walk the float array in llama2.c's order, checking each piece fits.
  const float* base = reinterpret_cast<const float*>(data + header);
  const int64_t available = static_cast<int64_t>((size - header) / sizeof(float));
  int64_t at = 0;
  auto take = [&](const char* what, int64_t count) {
    if (count > available - at)
      fail(path, ": truncated: ", what, " needs ", count, " floats at float offset ", at, ", file holds ",
           available);
    const float* p = base + at;
    at += count;
    return p;
  };
  Llama2cWeights& w = weights_;
  if (version_ == 1) {
    // v1 order: norms first, then matrices (export.py legacy_export vs version1_export).
    w.rms_att = take("rms_att_weight", L * D);
    w.rms_ffn = take("rms_ffn_weight", L * D);
    w.rms_final = take("rms_final_weight", D);
    w.token_embedding = take("token_embedding_table", V * D);
    w.wq = take("wq", L * D * D);
    w.wk = take("wk", L * kv_dim * D);
    w.wv = take("wv", L * kv_dim * D);
    w.wo = take("wo", L * D * D);
    w.w1 = take("w1", L * H * D);
    w.w2 = take("w2", L * D * H);
    w.w3 = take("w3", L * H * D);
  } else {
    w.token_embedding = take("token_embedding_table", V * D);
    w.rms_att = take("rms_att_weight", L * D);
    w.wq = take("wq", L * D * D);
    w.wk = take("wk", L * kv_dim * D);
    w.wv = take("wv", L * kv_dim * D);
    w.wo = take("wo", L * D * D);
    w.rms_ffn = take("rms_ffn_weight", L * D);
    w.w1 = take("w1", L * H * D);
    w.w2 = take("w2", L * D * H);
    w.w3 = take("w3", L * H * D);
    w.rms_final = take("rms_final_weight", D);
    take("freq_cis (unused)", c.seq_len * head);  // real + imaginary halves
  }
  w.wcls = c.shared_classifier ? w.token_embedding : take("wcls", V * D);
}

}  // namespace lowbit
