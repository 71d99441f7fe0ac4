// `lowbit verify`: runtime/kernel_verify.h. Exits 1 when a lossless kernel
// differs from the reference by more than float accumulation-order noise.
#include <algorithm>
#include <cstdio>

#include "command.h"
#include "core/error.h"
#include "kernels/dispatch.h"
#include "model_options.h"
#include "runtime/kernel_verify.h"

namespace lowbit::tools {
namespace {

struct VerifyOptions {
  ModelOptions model;
  std::string prompt = "Once upon a time there was a little girl who loved to";
  double tolerance = kLosslessRelativeTolerance;
};

struct Row {
  std::string label;
  KernelUse use;
  KernelComparison cmp;
  std::string same_as;  // a previous row with the same kernels: its numbers are reused
};

const char* verdict_text(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "ok (lossless)";
    case Verdict::Fail: return "FAIL (lossless kernel beyond float noise)";
    case Verdict::Approximate: return "approximate";
  }
  return "?";
}

int run(VerifyOptions o) {
  const std::string only = o.model.kernel;  // --kernel NAME: verify just that one
  o.model.kernel = "ref";
  LoadedModel ref = load_model(o.model);
  const bool llama2c = ref.model->is_llama2c();
  const std::vector<int32_t> tokens =
      ref.tokenizer->encode(o.prompt, llama2c || ref.tokenizer->vocab().add_bos, !llama2c);
  if (tokens.empty()) fail("the prompt encodes to no tokens; give one with -p");
  const int64_t V = ref.model->config().n_vocab;
  std::fprintf(stderr, "lowbit: verify %s on %zu tokens\n", ref.model->path().c_str(), tokens.size());
  const std::vector<float> ref_logits = evaluate_all_logits(*ref.model, *ref.pool, tokens);

  // "auto" first: what users get; then every family forced in turn.
  std::vector<std::string> labels = {"auto"};
  for (const KernelFamily& f : kernel_families())
    if (std::string(f.name) != "ref" && (only == "auto" || only == f.name)) labels.push_back(f.name);
  if (only != "auto" && find_kernel_family(only) == nullptr) {
    forced_kernel_names(only);  // an unknown name fails here, named
    labels.push_back(only);     // several families joined by '+', or a group ("q8k")
  }

  std::vector<Row> rows;
  std::vector<std::string> auto_kernels;
  for (const std::string& label : labels) {
    LoadOptions lo;
    lo.kernel = label;
    lo.n_ctx = ref.model->n_ctx();
    auto model = Model::load(ref.model->path(), lo, *ref.pool);
    Row row{label, describe_kernel_use(*model, *ref.model), {}, ""};
    if (label == "auto") auto_kernels = row.use.kernels;
    const std::vector<std::string> forced = forced_kernel_names(label);
    const bool names_itself = std::any_of(row.use.kernels.begin(), row.use.kernels.end(), [&](const std::string& k) {
      return std::find(forced.begin(), forced.end(), k.substr(0, k.find('/'))) != forced.end();
    });
    if (label != "auto" && !names_itself && row.use.kernels == auto_kernels) {
      std::printf("%-8s cannot run any matrix of this model\n", label.c_str());
      continue;
    }
    for (const Row& prev : rows)
      if (prev.use.kernels == row.use.kernels && prev.same_as.empty()) {
        row.same_as = prev.label;
        row.cmp = prev.cmp;
        break;
      }
    if (row.same_as.empty()) row.cmp = compare_kernel_logits(ref_logits, evaluate_all_logits(*model, *ref.pool, tokens), tokens, V);
    rows.push_back(std::move(row));
  }

  std::printf("%-8s %12s %10s %12s %12s %9s  %s\n", "kernel", "max|Δlogit|", "relative", "mean KLD", "max KLD",
              "top-1 %", "verdict");
  bool failed = false;
  for (const Row& r : rows) {
    const Verdict v = judge(r.cmp, r.use.lossless, o.tolerance);
    failed |= v == Verdict::Fail;
    const auto& d = r.cmp.distributions;
    std::printf("%-8s %12.3g %10.3g %12.3g %12.3g %9.2f  %s\n", r.label.c_str(), r.cmp.logits.max_abs_diff,
                r.cmp.logits.relative(), d.mean_kld(), d.max_kld(), 100 * d.top1_agreement(), verdict_text(v));
    std::printf("         kernels: %s%s%s\n", summarize_kernels(r.use.kernels).c_str(),
                r.same_as.empty() ? "" : ("; same as " + r.same_as).c_str(),
                r.use.lossless ? "" : ("; " + r.use.approximate_because).c_str());
  }
  std::printf("reference: %s, %zu tokens, max |logit| %.4g; lossless tolerance %.3g relative\n",
              summarize_kernels(describe_kernel_use(*ref.model, *ref.model).kernels).c_str(), tokens.size(),
              rows.empty() ? 0.0 : rows.front().cmp.logits.max_abs_base, o.tolerance);
  return failed ? 1 : 0;
}

CommandMain setup_verify(CLI::App& app) {
  auto o = std::make_shared<VerifyOptions>();
  o->model.add_to(app);
  app.add_option("-p,--prompt", o->prompt, "text to evaluate");
  app.add_option("--tolerance", o->tolerance, "largest |Δlogit| of a lossless kernel, relative to max |logit|");
  return [o] { return run(*o); };
}

const CommandRegistration verify_command{"verify", "compare every kernel that can run a model with the reference", setup_verify};

}  // namespace
}  // namespace lowbit::tools
