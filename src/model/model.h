// A loaded model: its configuration and weights, every matrix already in its
// kernel's layout (design.md: repack once, at load, per matrix).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "core/positional_file.h"
#include "kernels/matmul.h"
#include "model/model_config.h"

namespace lowbit {

class GgufFile;
class Llama2cCheckpoint;

struct LoadOptions {
  std::string kernel = "auto";  // --kernel
  int64_t n_ctx = 0;            // 0: the file's training context
  // Overrides the FFN activation (a `bitnet` file that is really 2B-4T).
  std::optional<FfnActivation> ffn_act;
  bool verbose = false;         // print each matrix's kernel to stderr
};

// A matrix and the optional per-tensor output scale some `bitnet` files carry.
struct Linear {
  std::unique_ptr<Matmul> matmul;
  float out_scale = 1.0f;  // blk.N.<name>.scale, else 1
};

struct LayerWeights {
  std::vector<float> attn_norm;      // [D]
  Linear wq, wk, wv;                 // [Hq*Dh x D], [Hkv*Dh x D], [Hkv*Dh x D]
  std::vector<float> attn_sub_norm;  // [Hq*Dh] (BitNet only)
  Linear wo;                         // [D x Hq*Dh]
  std::vector<float> ffn_norm;       // [D]
  Linear w_gate, w_up;               // [F x D]
  std::vector<float> ffn_sub_norm;   // [F] (BitNet only)
  Linear w_down;                     // [D x F]
};

class Model {
 public:
  // Reads GGUF or llama2.c (told apart by the file's first bytes).
  static std::unique_ptr<Model> load(const std::string& path, const LoadOptions& options, ThreadPool& pool);
  ~Model();

  const ModelConfig& config() const { return config_; }
  const std::string& path() const { return path_; }
  int64_t n_ctx() const { return n_ctx_; }
  // The GGUF file (vocabulary lives there); nullptr for llama2.c checkpoints.
  const GgufFile* gguf() const { return gguf_.get(); }
  bool is_llama2c() const { return llama2c_ != nullptr; }
  // llama2.c's run.c keeps its KV cache in float; matching its output to the
  // last digit needs the same (GGUF models use f16, as their engines do).
  bool prefers_f32_kv_cache() const { return is_llama2c(); }

  // x[0, D) = embedding of token.
  void embed(int32_t token, float* x) const;

  const std::vector<LayerWeights>& layers() const { return layers_; }
  const std::vector<float>& output_norm() const { return output_norm_; }
  const Linear& output() const { return output_; }
  // Bytes of weights read per generated token (matrices + one embedding row).
  int64_t weight_bytes_per_token() const;
  // One line per distinct (kernel, type) used, for -v.
  std::string describe_kernels() const;

 private:
  Model() = default;
  void load_gguf(const LoadOptions& options, ThreadPool& pool);
  void load_llama2c(const LoadOptions& options, ThreadPool& pool);

  std::string path_;
  ModelConfig config_;
  int64_t n_ctx_ = 0;
  std::unique_ptr<GgufFile> gguf_;
  std::unique_ptr<Llama2cCheckpoint> llama2c_;
  WeightView embedding_;  // [V x D] in the file's format
  // Embedding rows are read from the file with pread, not through the mapping:
  // a token's row would otherwise map in (and keep resident) up to 2 MiB of it.
  std::unique_ptr<PositionalFile> embedding_file_;
  int64_t embedding_offset_ = 0;  // of the tensor in the file
  float embedding_scale_ = 1.0f;  // the tensor scale (I2_S), else 1
  std::vector<LayerWeights> layers_;
  std::vector<float> output_norm_;  // [D]
  Linear output_;                   // [V x D]
  std::vector<std::string> kernel_log_;
};

}  // namespace lowbit
