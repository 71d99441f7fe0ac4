// Hyper-parameters of a decoder, as read from a model file.
#pragma once

#include <cstdint>
#include <string>

#include "model/model_shapes.h"

namespace lowbit {

enum class Architecture {
  Llama,        // llama.cpp "llama"; llama2.c checkpoints
  BitNet,       // "bitnet": bitnet_b1_58-large/3B (SiLU gate, sub-norms)
  BitNetB158,   // "bitnet-b1.58" / "bitnet-25": BitNet b1.58 2B-4T (squared-ReLU gate, sub-norms)
};

// How RoPE pairs up a head's dimensions.
enum class RopeStyle {
  Interleaved,  // (x0, x1), (x2, x3), ...: llama.cpp "norm", llama2.c
  HalfSplit,    // (x0, x_{d/2}), (x1, x_{d/2+1}), ...: GPT-NeoX, Hugging Face rotate_half
};

struct ModelConfig {
  Architecture arch = Architecture::Llama;
  std::string arch_name;  // as written in the file
  int64_t n_embd = 0;     // hidden size D
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;   // Dh; n_head * Dh need not equal D
  int64_t n_ff = 0;       // FFN hidden size F
  int64_t n_vocab = 0;    // V
  int64_t n_ctx_train = 0;
  int64_t n_rot = 0;      // rotated dimensions per head (<= Dh)
  float rope_theta = 10000.0f;
  RopeStyle rope_style = RopeStyle::Interleaved;
  float rms_eps = 1e-5f;
  FfnActivation ffn_act = FfnActivation::Silu;
  bool sub_norms = false;  // BitNet: RMSNorm before attn_output and before ffn_down

  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }
};

const char* architecture_name(Architecture a);

}  // namespace lowbit
