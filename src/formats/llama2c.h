// llama2.c checkpoints (karpathy/llama2.c): the legacy float32 format (version 0:
// a 7-int header, then the weights) and version 1 ("ak42" magic, float32).
// The weights stay in the mapping; the views below point into it.
#pragma once

#include <cstdint>
#include <string>

#include "core/mapped_file.h"

namespace lowbit {

struct Llama2cConfig {
  int32_t dim = 0;         // transformer width
  int32_t hidden_dim = 0;  // FFN width
  int32_t n_layers = 0;
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;
  int32_t vocab_size = 0;  // always positive here; see shared_classifier
  int32_t seq_len = 0;
  bool shared_classifier = true;  // classifier = token embedding (v0: vocab_size > 0 in the file)
};

// Row-major float32 views into the mapping; shapes as llama2.c writes them.
struct Llama2cWeights {
  const float* token_embedding = nullptr;  // [vocab][dim]
  const float* rms_att = nullptr;          // [layers][dim]
  const float* wq = nullptr;               // [layers][n_heads*head_size][dim]
  const float* wk = nullptr;               // [layers][n_kv_heads*head_size][dim]
  const float* wv = nullptr;               // [layers][n_kv_heads*head_size][dim]
  const float* wo = nullptr;               // [layers][dim][n_heads*head_size]
  const float* rms_ffn = nullptr;          // [layers][dim]
  const float* w1 = nullptr;               // [layers][hidden][dim]  (gate)
  const float* w2 = nullptr;               // [layers][dim][hidden]  (down)
  const float* w3 = nullptr;               // [layers][hidden][dim]  (up)
  const float* rms_final = nullptr;        // [dim]
  const float* wcls = nullptr;             // [vocab][dim] (== token_embedding when shared)
};

class Llama2cCheckpoint {
 public:
  // Maps and validates (header values, sizes against the file length); throws Error naming the path.
  explicit Llama2cCheckpoint(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const Llama2cConfig& config() const { return config_; }
  const Llama2cWeights& weights() const { return weights_; }
  int version() const { return version_; }
  // Where p, a pointer into the weights, lies in the file.
  int64_t file_offset(const void* p) const { return static_cast<const uint8_t*>(p) - file_.data(); }

  // True when the file starts like a llama2.c checkpoint (used to tell it from GGUF).
  static bool looks_like(const uint8_t* data, size_t size);

 private:
  MappedFile file_;
  Llama2cConfig config_;
  Llama2cWeights weights_;
  int version_ = 0;
};

}  // namespace lowbit
