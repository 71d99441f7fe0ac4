#include "model_options.h"

#include <cstdio>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "kernels/dispatch.h"
#include "progress_bar.h"
#include "runtime/dummy_model.h"
#include "runtime/tokenizer_loader.h"

namespace lowbit::tools {

void ModelOptions::add_to(CLI::App& app) {
  app.add_option("-m,--model", model, "model file: GGUF or llama2.c checkpoint (default: cached bitnet-2b4t dummy)");
  app.add_option("-z,--tokenizer", tokenizer,
                 "tokenizer: llama2.c tokenizer.bin, tokenizer.json or GGUF (default: the model's own vocabulary)");
  app.add_option("-t,--threads", threads, "threads (default: all hardware threads)");
  app.add_option("--kernel", kernel, "matmul kernel: " + kernel_names());
  app.add_option("-c,--ctx", ctx, "context length (default: the model's)");
  app.add_option("--ffn-act", ffn_act, "override the FFN activation: silu or relu2")
      ->check(CLI::IsMember({"silu", "relu2"}));
  app.add_flag("-v,--verbose", verbose, "print the kernel chosen for each matrix");
}

int ModelOptions::thread_count() const {
  if (threads > 0) return threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string ensure_default_model(ThreadPool& pool) {
  const DummyModelOptions dummy;
  const std::string path = default_model_path(dummy);
  if (std::filesystem::exists(path)) return path;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) fail("cannot create the cache folder for ", path, ": ", ec.message());
  std::fprintf(stderr, "lowbit: no model given; making the default %s dummy (random ternary weights) at %s\n",
               dummy.shape.c_str(), path.c_str());
  ProgressBar bar("lowbit: gen-model");
  write_dummy_model(dummy, path, pool, [&](double f) { bar.update(f); });
  bar.finish();
  return path;
}

LoadedModel load_model(const ModelOptions& o, bool need_tokenizer) {
  LoadedModel lm;
  lm.pool = std::make_unique<ThreadPool>(o.thread_count());
  const std::string path = o.model.empty() ? ensure_default_model(*lm.pool) : o.model;
  LoadOptions lo;
  lo.kernel = o.kernel;
  lo.n_ctx = o.ctx;
  lo.verbose = o.verbose;
  if (o.ffn_act == "silu") lo.ffn_act = FfnActivation::Silu;
  if (o.ffn_act == "relu2") lo.ffn_act = FfnActivation::SquaredRelu;
  lm.model = Model::load(path, lo, *lm.pool);
  if (need_tokenizer) lm.tokenizer = load_tokenizer(o.tokenizer, *lm.model);
  return lm;
}

}  // namespace lowbit::tools
