// `lowbit perplexity`: llama-perplexity's measurement (runtime/perplexity.h),
// and the KL divergence of a model's distributions from a base model's saved
// with --kld-base (runtime/logprob_file.h).
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "command.h"
#include "core/error.h"
#include "core/timer.h"
#include "model_options.h"
#include "progress_bar.h"
#include "runtime/kl_divergence.h"
#include "runtime/logprob_file.h"
#include "runtime/perplexity.h"

namespace lowbit::tools {
namespace {

struct PerplexityOptions {
  ModelOptions model;
  std::string text_file;
  int64_t chunks = -1;
  std::string kld_base;
  std::string kld;
  std::string kv_type = "f16";
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open the text file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string format_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

// Opens the base file and checks it was computed on the same tokens; limits
// the plan to the chunks both have.
std::unique_ptr<LogprobFileReader> open_base(const std::string& path, const std::vector<int32_t>& tokens,
                                             int64_t n_vocab, PerplexityPlan& plan) {
  auto reader = std::make_unique<LogprobFileReader>(path);
  const LogprobFileHeader& h = reader->header();
  if (h.n_vocab != n_vocab) fail(path, ": saved for a vocabulary of ", h.n_vocab, ", this model has ", n_vocab);
  if (h.n_ctx != plan.n_ctx)
    fail(path, ": saved with a context of ", h.n_ctx, ", this run uses ", plan.n_ctx, " (pass -c ", h.n_ctx, ")");
  plan.n_chunks = std::min(plan.n_chunks, h.n_chunks);
  for (int64_t i = 0; i < plan.n_chunks * plan.n_ctx; ++i)
    if (h.tokens[static_cast<size_t>(i)] != tokens[static_cast<size_t>(i)])
      fail(path, ": token ", i, " differs (", h.tokens[static_cast<size_t>(i)], " saved, ",
           tokens[static_cast<size_t>(i)], " now): the base was computed on another text or tokenizer");
  return reader;
}

void print_comparison(const DistributionComparison& c, const std::string& base_path) {
  std::printf("KL divergence from %s, %lld positions:\n", base_path.c_str(), static_cast<long long>(c.count()));
  std::printf("  PPL(base)   = %.4f +/- %.5f\n", c.base_nll().perplexity(), c.base_nll().perplexity_error());
  std::printf("  PPL(model)  = %.4f +/- %.5f\n", c.nll().perplexity(), c.nll().perplexity_error());
  std::printf("  Mean KLD    = %.6f +/- %.6f\n", c.mean_kld(), c.kld_error());
  std::printf("  Max KLD     = %.6f\n", c.max_kld());
  std::printf("  Same top-1  = %.3f +/- %.3f %%\n", 100 * c.top1_agreement(), 100 * c.top1_error());
  std::printf("  Mean |Δp|   = %.4f %%\n", 100 * c.mean_abs_dp());
  std::printf("  Max |Δp|    = %.4f %%\n", 100 * c.max_abs_dp());
}

int run(const PerplexityOptions& o) {
  LoadedModel lm = load_model(o.model);
  const Vocab& vocab = lm.tokenizer->vocab();
  const int64_t n_vocab = lm.model->config().n_vocab;
  const std::vector<int32_t> tokens = lm.tokenizer->encode(read_file(o.text_file), vocab.add_bos, false);
  PerplexityPlan plan = plan_perplexity(static_cast<int64_t>(tokens.size()), lm.model->n_ctx(), o.chunks);
  const int32_t bos = vocab.add_bos ? vocab.bos : -1;

  std::unique_ptr<LogprobFileWriter> writer;
  std::unique_ptr<LogprobFileReader> reader;
  if (!o.kld.empty()) reader = open_base(o.kld, tokens, n_vocab, plan);
  if (!o.kld_base.empty()) {
    LogprobFileHeader h{n_vocab, plan.n_ctx, plan.n_chunks, plan.first,
                        std::vector<int32_t>(tokens.begin(), tokens.begin() + plan.n_chunks * plan.n_ctx)};
    writer = std::make_unique<LogprobFileWriter>(o.kld_base, h);
  }
  std::fprintf(stderr, "lowbit: %zu tokens; %lld chunks of %lld, scoring positions %lld..%lld of each\n",
               tokens.size(), static_cast<long long>(plan.n_chunks), static_cast<long long>(plan.n_ctx),
               static_cast<long long>(plan.first), static_cast<long long>(plan.n_ctx - 2));

  Decoder decoder(*lm.model, *lm.pool, kPromptBatch, o.kv_type == "f32" ? KvCacheType::F32 : KvCacheType::F16);
  DistributionComparison comparison;
  std::string chunk_log;
  ProgressBar bar("lowbit: perplexity");
  bar.update(0);
  const double start = now_seconds();
  const NllStats stats =
      run_perplexity(decoder, tokens, plan, bos, [&](int64_t chunk, const float* logits, const int32_t* chunk_tokens, const NllStats& so_far) {
        chunk_log += cat("[", chunk + 1, "]", format_fixed(so_far.perplexity(), 4), ",");
        const float* scored = logits + plan.first * n_vocab;
        if (writer) writer->add_rows(scored, plan.scored_per_chunk(), *lm.pool);
        if (reader)
          compare_with_base(*reader, scored, plan.scored_per_chunk(), chunk_tokens + plan.first + 1, *lm.pool,
                            comparison);
        bar.update(static_cast<double>(chunk + 1) / static_cast<double>(plan.n_chunks));
      });
  bar.finish();
  if (writer) {
    writer->finish();
    std::fprintf(stderr, "lowbit: saved the log-probabilities of %lld positions to %s\n",
                 static_cast<long long>(plan.n_chunks * plan.scored_per_chunk()), o.kld_base.c_str());
  }
  const double seconds = now_seconds() - start;
  std::fprintf(stderr, "lowbit: %.2f s, %.1f tokens/s\n", seconds,
               static_cast<double>(plan.n_chunks * plan.n_ctx) / seconds);
  std::printf("%s\n", chunk_log.c_str());
  std::printf("Final estimate: PPL = %.4f +/- %.5f\n", stats.perplexity(), stats.perplexity_error());
  if (reader) print_comparison(comparison, o.kld);
  return 0;
}

CommandMain setup_perplexity(CLI::App& app) {
  auto o = std::make_shared<PerplexityOptions>();
  o->model.ctx = 512;
  o->model.add_to(app);
  app.add_option("-f,--file", o->text_file, "text file to score")->required();
  app.add_option("--chunks", o->chunks, "score at most this many chunks (default: all)");
  auto* base = app.add_option("--kld-base", o->kld_base, "save the scored log-probabilities to this file");
  app.add_option("--kld", o->kld, "compare with log-probabilities saved by --kld-base: KL divergence, top-1, Δp")
      ->excludes(base);
  app.add_option("--kv-type", o->kv_type, "KV cache type: f16 or f32")->check(CLI::IsMember({"f16", "f32"}));
  return [o] { return run(*o); };
}

const CommandRegistration perplexity_command{"perplexity", "perplexity of a text (llama.cpp's method), KL divergence from a base",
                              setup_perplexity};

}  // namespace
}  // namespace lowbit::tools
