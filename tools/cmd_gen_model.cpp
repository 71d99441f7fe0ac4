// `lowbit gen-model`: a GGUF of a real model's shape with random ternary weights.
#include <cstdio>
#include <thread>

#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "model/model_shapes.h"
#include "progress_bar.h"
#include "runtime/dummy_model.h"

namespace lowbit::tools {
namespace {

struct GenModelOptions {
  std::string shape = "bitnet-2b4t";
  std::string type = "i2_s";
  std::string head_type = "f16";
  std::string output;
  uint64_t seed = 1;
  int threads = 0;
};

CommandMain setup_gen_model(CLI::App& app) {
  auto o = std::make_shared<GenModelOptions>();
  std::vector<std::string> shapes;
  for (const auto& s : model_shapes()) shapes.push_back(s.name);
  app.add_option("--shape", o->shape, "model shape")->check(CLI::IsMember(shapes));
  app.add_option("--type", o->type, "type of the ternary matrices")
      ->check(CLI::IsMember({"i2_s", "tq2_0", "tq1_0", "f16"}));
  app.add_option("--head-type", o->head_type, "type of the embedding / output head")
      ->check(CLI::IsMember({"f16", "q8_0", "q6_k"}));
  app.add_option("-o,--output", o->output, "output GGUF file")->required();
  app.add_option("--seed", o->seed, "random seed");
  app.add_option("-t,--threads", o->threads, "threads (default: all)");
  return [o] {
    DummyModelOptions d;
    d.shape = o->shape;
    d.type = ggml_type_from_name(o->type);
    d.head_type = ggml_type_from_name(o->head_type);
    d.seed = o->seed;
    ThreadPool pool(o->threads > 0 ? o->threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    ProgressBar bar("lowbit: gen-model " + o->shape);
    write_dummy_model(d, o->output, pool, [&](double f) { bar.update(f); });
    bar.finish();
    std::fprintf(stderr, "lowbit: wrote %s\n", o->output.c_str());
    return 0;
  };
}

const CommandRegistration gen_model_command{"gen-model", "write a dummy model of a real shape with random ternary weights",
                              setup_gen_model};

}  // namespace
}  // namespace lowbit::tools
