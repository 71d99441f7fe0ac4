// `lowbit chat`: an interactive conversation on stdin/stdout. Each line read
// is a user turn; the reply streams to stdout, in the model's chat format
// (runtime/chat_format.h), and each turn keeps the KV cache of the
// conversation so far (runtime/session.h).
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "core/error.h"
#include "model_options.h"
#include "sampling_options.h"
#include "runtime/chat_format.h"
#include "runtime/session.h"

namespace lowbit::tools {
namespace {

struct ChatOptions {
  ModelOptions model;
  std::string system;
  int64_t n_predict = -1;
  SamplerParams sampling;
  bool seed_given = false;
};

int chat(const ChatOptions& o) {
  LoadedModel lm = load_model(o.model);
  if (lm.model->is_llama2c()) fail("chat: llama2.c checkpoints have no chat format; use `lowbit run`");
  Session session(*lm.model, *lm.pool);
  std::vector<ChatMessage> messages;
  if (!o.system.empty()) messages.push_back({"system", o.system});
  GenerateOptions g;
  g.n_predict = o.n_predict;
  g.sampling = o.sampling;
  if (!o.seed_given) g.sampling.seed = static_cast<uint64_t>(std::time(nullptr));
  const ChatFormat format = detect_chat_format(*lm.model, lm.tokenizer->vocab());  // once: it may scan the vocabulary
  std::fprintf(stderr, "lowbit: chat (format %s); one line per turn, end with Ctrl-D\n", chat_format_name(format));
  // The conversation as the model has seen it: its text and its tokens (the
  // replies as sampled, not re-tokenized), so each turn's prompt extends the
  // last one and the whole cache is reused.
  std::string seen_text;
  std::vector<int32_t> prompt;
  for (std::string line;;) {
    std::fputs("> ", stderr);
    if (!std::getline(std::cin, line)) break;
    if (line.empty()) continue;
    messages.push_back({"user", line});
    const std::string text = render_chat(format, messages);
    if (!prompt.empty() && text.rfind(seen_text, 0) == 0) {
      const auto more = lm.tokenizer->encode(text.substr(seen_text.size()), false, /*parse_special=*/true);
      prompt.insert(prompt.end(), more.begin(), more.end());
    } else {  // the format does not extend verbatim: encode it all again
      prompt = lm.tokenizer->encode(text, lm.tokenizer->vocab().add_bos, /*parse_special=*/true);
    }
    std::string reply;
    const GenerateResult r = session.generate(*lm.tokenizer, prompt, g, [&](std::string_view piece) {
      reply += piece;
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    });
    std::fputs("\n", stdout);
    std::fflush(stdout);
    messages.push_back({"assistant", reply});
    seen_text = text + reply;
    prompt.insert(prompt.end(), r.generated.begin(), r.generated.end());
    const double tg = r.generate_seconds > 0 ? static_cast<double>(r.generated.size()) / r.generate_seconds : 0;
    std::fprintf(stderr, "lowbit: %zu prompt tokens (%lld cached), %zu generated, %.2f tok/s\n",
                 prompt.size() - r.generated.size(),
                 static_cast<long long>(session.last_cached()), r.generated.size(), tg);
    ++g.sampling.seed;
  }
  return 0;
}

CommandMain setup_chat(CLI::App& app) {
  auto o = std::make_shared<ChatOptions>();
  o->model.add_to(app);
  app.add_option("--system", o->system, "system message");
  app.add_option("-n,--n-predict", o->n_predict, "most tokens per reply (-1: until the end of turn or the context)");
  add_sampling_options(app, o->sampling, o->seed_given);
  return [o] { return chat(*o); };
}

const CommandRegistration chat_command{"chat", "talk with the model: one line per turn on stdin, replies on stdout", setup_chat};

}  // namespace
}  // namespace lowbit::tools
