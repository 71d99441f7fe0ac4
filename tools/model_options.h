// The options every command that runs a model shares (-m, -z, -t, --kernel,
// --ctx, -v, --ffn-act), and loading what they name.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "core/thread_pool.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace lowbit::tools {

struct ModelOptions {
  std::string model;      // empty: the cached bitnet-2b4t dummy
  std::string tokenizer;  // llama2.c tokenizer.bin, tokenizer.json or a GGUF with a vocabulary
  int threads = 0;        // 0: all hardware threads
  std::string kernel = "auto";
  int64_t ctx = 0;
  std::string ffn_act;    // "", "silu" or "relu2"
  bool verbose = false;

  void add_to(CLI::App& app);
  int thread_count() const;
};

struct LoadedModel {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
};

// Makes the default dummy model on first use (with a progress bar), loads the
// model and its tokenizer. Throws Error naming what is missing.
LoadedModel load_model(const ModelOptions& options, bool need_tokenizer = true);

// The cached bitnet-2b4t dummy's path, made if absent.
std::string ensure_default_model(ThreadPool& pool);

}  // namespace lowbit::tools
