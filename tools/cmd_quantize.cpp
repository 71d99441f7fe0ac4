// `lowbit quantize IN OUT --type T`: runtime/model_quantizer.h.
#include <cstdio>
#include <map>
#include <thread>

#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "progress_bar.h"
#include "runtime/model_quantizer.h"
#include "runtime/tensor_quantizer.h"

namespace lowbit::tools {
namespace {

struct QuantizeCliOptions {
  std::string input, output, type, embd_type, tokenizer;
  int threads = 0;
  bool verbose = false;
};

void print_summary(const QuantizeResult& r, const QuantizeCliOptions& o) {
  std::map<std::string, int> counts;  // "f32 -> q8_0" -> tensors
  for (const TensorOutcome& t : r.tensors) {
    counts[cat(ggml_type_name(t.from), " -> ", ggml_type_name(t.to))]++;
    if (!t.note.empty()) std::fprintf(stderr, "lowbit: %s: %s\n", t.name.c_str(), t.note.c_str());
    if (o.verbose && t.note.empty())
      std::fprintf(stderr, "lowbit: %s: %s -> %s\n", t.name.c_str(), ggml_type_name(t.from), ggml_type_name(t.to));
  }
  for (const auto& [what, n] : counts) std::fprintf(stderr, "lowbit: %4d tensors %s\n", n, what.c_str());
  std::fprintf(stderr, "lowbit: wrote %s: %.2f MiB of tensors (from %.2f MiB)\n", o.output.c_str(),
               static_cast<double>(r.bytes_out) / (1 << 20), static_cast<double>(r.bytes_in) / (1 << 20));
}

CommandMain setup_quantize(CLI::App& app) {
  auto o = std::make_shared<QuantizeCliOptions>();
  std::vector<std::string> types;
  for (GgmlType t : quantize_target_types()) types.push_back(ggml_type_name(t));
  app.add_option("input", o->input, "model: GGUF (f32/f16/bf16 matrices) or llama2.c checkpoint")->required();
  app.add_option("output", o->output, "GGUF file to write")->required();
  app.add_option("--type", o->type, "type of the weight matrices (ternary types ternarize with absmean)")
      ->required()
      ->check(CLI::IsMember(types, CLI::ignore_case));
  app.add_option("--embd-type", o->embd_type, "type of token_embd / output (default: as in the input)")
      ->check(CLI::IsMember(types, CLI::ignore_case));
  app.add_option("-z,--tokenizer", o->tokenizer, "llama2.c input: its tokenizer.bin");
  app.add_option("-t,--threads", o->threads, "threads (default: all)");
  app.add_flag("-v,--verbose", o->verbose, "print every tensor's conversion");
  return [o] {
    QuantizeOptions q;
    q.type = ggml_type_from_name(o->type);
    if (!o->embd_type.empty()) q.embd_type = ggml_type_from_name(o->embd_type);
    q.tokenizer = o->tokenizer;
    ThreadPool pool(o->threads > 0 ? o->threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    ProgressBar bar("lowbit: quantize " + o->type);
    const QuantizeResult r = quantize_model(o->input, o->output, q, pool, [&](double f) { bar.update(f); });
    bar.finish();
    print_summary(r, *o);
    return 0;
  };
}

const CommandRegistration quantize_command{"quantize", "rewrite a model's weight matrices in another type", setup_quantize};

}  // namespace
}  // namespace lowbit::tools
