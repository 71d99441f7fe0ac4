// The shapes of real ternary models, for gen-model's dummies and the GEMV
// benchmarks. Hyper-parameters are the published configs of each model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit {

enum class FfnActivation { Silu, SquaredRelu };

struct ModelShape {
  std::string name;          // --shape value
  std::string architecture;  // GGUF general.architecture
  int64_t n_embd;            // hidden size
  int64_t n_layer;
  int64_t n_head;
  int64_t n_head_kv;
  int64_t head_dim;
  int64_t n_ff;              // FFN hidden size
  int64_t n_vocab;
  int64_t n_ctx;             // training context
  float rope_theta;
  float rms_eps;
  FfnActivation ffn;
  bool tied_output;          // output head = token embedding
  bool sub_norms;            // BitNet's attn_sub_norm / ffn_sub_norm
  bool bpe_vocab;            // Llama 3 byte-level BPE (else Llama 2 SentencePiece)
  int64_t n_merges;          // BPE merges in the real tokenizer
};

const std::vector<ModelShape>& model_shapes();
// Throws Error listing the known names.
const ModelShape& find_model_shape(const std::string& name);

// The distinct ternary matrix shapes of a model, {rows N, cols K}: q, k/v, o, gate/up, down.
std::vector<std::pair<int64_t, int64_t>> matrix_shapes(const ModelShape& s);

}  // namespace lowbit
