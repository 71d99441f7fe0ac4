#include "model/model_shapes.h"

#include <algorithm>

#include "core/error.h"

namespace lowbit {

const std::vector<ModelShape>& model_shapes() {
  static const std::vector<ModelShape> shapes = {
      // microsoft/bitnet-b1.58-2B-4T
      {"bitnet-2b4t", "bitnet-b1.58", 2560, 30, 20, 5, 128, 6912, 128256, 4096, 500000.0f, 1e-5f,
       FfnActivation::SquaredRelu, true, true, true, 280147},
      // 1bitLLM/bitnet_b1_58-large (0.7B)
      {"bitnet-large", "bitnet", 1536, 24, 16, 16, 96, 4096, 32002, 2048, 10000.0f, 1e-5f, FfnActivation::Silu,
       false, true, false, 0},
      // 1bitLLM/bitnet_b1_58-3B
      {"bitnet-3b", "bitnet", 3200, 26, 32, 32, 100, 8640, 32002, 2048, 10000.0f, 1e-5f, FfnActivation::Silu,
       false, true, false, 0},
      // HF1BitLLM/Llama3-8B-1.58-100B-tokens
      {"llama3-8b-1.58", "llama", 4096, 32, 32, 8, 128, 14336, 128256, 8192, 500000.0f, 1e-5f,
       FfnActivation::Silu, false, false, true, 280147},
      // tiiuae/Falcon3-1B-Instruct-1.58bit
      {"falcon3-1b-1.58", "llama", 2048, 18, 8, 4, 256, 8192, 131072, 8192, 1000042.0f, 1e-6f,
       FfnActivation::Silu, false, false, true, 128000},
      // A 2B-4T-style model small enough for tests.
      {"tiny", "bitnet-b1.58", 256, 2, 4, 2, 64, 768, 1024, 256, 500000.0f, 1e-5f, FfnActivation::SquaredRelu,
       true, true, true, 700},
  };
  return shapes;
}

const ModelShape& find_model_shape(const std::string& name) {
  std::string known;
  for (const auto& s : model_shapes()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  fail("unknown model shape '", name, "' (known: ", known, ")");
}

std::vector<std::pair<int64_t, int64_t>> matrix_shapes(const ModelShape& s) {
  const int64_t q = s.n_head * s.head_dim, kv = s.n_head_kv * s.head_dim;
  std::vector<std::pair<int64_t, int64_t>> out = {{q, s.n_embd}, {kv, s.n_embd}, {s.n_embd, q},
                                                  {s.n_ff, s.n_embd}, {s.n_embd, s.n_ff}};
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace lowbit
