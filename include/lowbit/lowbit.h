// lowbit's public C++ API: open a model, tokenize, generate, read logits.
// Everything else under src/ is internal and may change.
//
//   auto engine = lowbit::Engine::open({.model = "model.gguf"});
//   engine->generate("Once upon a time", {.n_predict = 64}, [](std::string_view t) { fputs(...); });
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lowbit {

struct EngineOptions {
  std::string model;      // GGUF or llama2.c checkpoint
  std::string tokenizer;  // empty: the model's own vocabulary (required for llama2.c checkpoints)
  int threads = 0;        // 0: all hardware threads
  std::string kernel = "auto";
  int64_t n_ctx = 0;      // 0: the model's training context
};

struct GenerationParams {
  int64_t n_predict = 128;
  float temperature = 0.8f;
  int32_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float repeat_penalty = 1.0f;
  uint64_t seed = 0;
};

struct GenerationStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double prompt_seconds = 0;
  double generate_seconds = 0;
};

class Engine {
 public:
  // Throws lowbit::Error (a std::runtime_error) naming the file and problem.
  static std::unique_ptr<Engine> open(const EngineOptions& options);
  ~Engine();

  int64_t vocab_size() const;
  int64_t context_length() const;
  std::vector<int32_t> tokenize(std::string_view text, bool add_bos = true) const;
  std::string token_text(int32_t token) const;

  // Logits [vocab_size] after the whole sequence `tokens`, from an empty cache.
  std::vector<float> logits(const std::vector<int32_t>& tokens);

  // Streams generated text (not the prompt) to on_text; stops at end-of-text tokens.
  GenerationStats generate(std::string_view prompt, const GenerationParams& params,
                           const std::function<void(std::string_view)>& on_text);

 private:
  struct Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lowbit
