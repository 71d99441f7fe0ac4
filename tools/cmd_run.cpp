// `lowbit run`: generate text from a prompt, streaming it to stdout.
#include <cstdio>
#include <ctime>

#include "command.h"
#include "core/error.h"
#include "logits_file.h"
#include "model/decoder.h"
#include "model_options.h"
#include "sampling_options.h"
#include "runtime/generator.h"

namespace lowbit::tools {
namespace {

struct RunOptions {
  ModelOptions model;
  std::string prompt = "Once upon a time";
  int64_t n_predict = 128;
  SamplerParams sampling;
  bool seed_given = false;
  std::string dump_logits;
  std::string kv_type = "auto";
};

int run(const RunOptions& o) {
  LoadedModel lm = load_model(o.model);
  const bool llama2c = lm.model->is_llama2c();
  // llama2.c's encoder: BOS, and a leading space only for a non-empty prompt;
  // SentencePiece vocabularies add the space themselves when encoding.
  const bool add_bos = lm.tokenizer->vocab().add_bos;
  std::vector<int32_t> prompt = lm.tokenizer->encode(o.prompt, llama2c || add_bos, !llama2c);
  if (prompt.empty()) fail("the prompt encodes to no tokens and the vocabulary adds no BOS; give a prompt");

  GenerateOptions g;
  g.n_predict = o.n_predict;
  g.sampling = o.sampling;
  if (!o.seed_given) g.sampling.seed = static_cast<uint64_t>(std::time(nullptr));
  g.llama2c_rules = llama2c;
  if (o.model.verbose)
    std::fprintf(stderr, "lowbit: %zu prompt tokens, seed %llu\n", prompt.size(),
                 static_cast<unsigned long long>(g.sampling.seed));

  const bool f32_cache = o.kv_type == "f32" || (o.kv_type == "auto" && lm.model->prefers_f32_kv_cache());
  Decoder decoder(*lm.model, *lm.pool, kPromptBatch, f32_cache ? KvCacheType::F32 : KvCacheType::F16);
  if (!llama2c) {
    std::fputs(o.prompt.c_str(), stdout);
    std::fflush(stdout);
  }
  GenerateResult r;
  try {
    r = generate_text(decoder, *lm.tokenizer, prompt, g, [](std::string_view text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    });
  } catch (...) {
    std::fputs("\n", stdout);  // end the streamed line, so the error stands on its own
    std::fflush(stdout);
    throw;
  }
  std::fputs("\n", stdout);
  std::fflush(stdout);
  if (!o.dump_logits.empty()) write_logits_file(o.dump_logits, r.prompt_logits);

  const double pp = r.prompt_seconds > 0 ? static_cast<double>(r.prompt_tokens.size()) / r.prompt_seconds : 0;
  const double tg = r.generate_seconds > 0 ? static_cast<double>(r.generated.size()) / r.generate_seconds : 0;
  std::fprintf(stderr, "lowbit: prompt %zu tokens, %.2f tok/s | generated %zu tokens, %.2f tok/s\n",
               r.prompt_tokens.size(), pp, r.generated.size(), tg);
  return 0;
}

CommandMain setup_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  o->model.add_to(app);
  app.add_option("-p,--prompt", o->prompt, "prompt text");
  app.add_option("-n,--n-predict", o->n_predict,
                 "tokens to generate (-1: until the context is full); llama2.c checkpoints: total positions, "
                 "prompt included, as llama2.c counts them");
  add_sampling_options(app, o->sampling, o->seed_given);
  app.add_option("--dump-logits", o->dump_logits, "write the last prompt position's logits, one %.9g per line");
  app.add_option("--kv-type", o->kv_type, "KV cache type: f16, f32 or auto (f32 for llama2.c checkpoints, else f16)")
      ->check(CLI::IsMember({"auto", "f16", "f32"}));
  return [o] { return run(*o); };
}

const CommandRegistration run_command{"run", "generate text from a prompt", setup_run};

}  // namespace
}  // namespace lowbit::tools
