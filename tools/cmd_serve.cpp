// `lowbit serve`: the model behind OpenAI-style HTTP endpoints
// (server/completion_service.h), until SIGINT or SIGTERM.
#include <csignal>
#include <cstdio>
#include <filesystem>

#include "command.h"
#include "model_options.h"
#include "server/completion_service.h"
#include "server/http_server.h"

namespace lowbit::tools {
namespace {

struct ServeOptions {
  ModelOptions model;
  std::string host = "127.0.0.1";
  int port = 8080;
  BatchedOptions batching;
};

HttpServer* g_server = nullptr;

void on_signal(int) {
  if (g_server != nullptr) g_server->stop();  // shutdown(2) only: safe in a handler
}

int serve(const ServeOptions& o) {
  LoadedModel lm = load_model(o.model);
  const std::string name = o.model.model.empty() ? "bitnet-2b4t-dummy" : std::filesystem::path(o.model.model).stem().string();
  CompletionService service(*lm.model, *lm.tokenizer, *lm.pool, name, o.batching);
  HttpServer server(o.host, o.port);
  g_server = &server;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::fprintf(stderr,
               "lowbit: serving %s on http://%s:%d (POST /v1/completions, /v1/chat/completions), %d request%s at "
               "once, chat format %s\n",
               name.c_str(), o.host.c_str(), server.port(), o.batching.n_slots, o.batching.n_slots > 1 ? "s" : "",
               chat_format_name(service.chat_format()));
  server.serve([&](const HttpRequest& req, HttpResponder& out) { service.handle(req, out); });
  g_server = nullptr;
  std::fprintf(stderr, "lowbit: server stopped\n");
  return 0;
}

CommandMain setup_serve(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  o->model.add_to(app);
  app.add_option("--host", o->host, "address to listen on (default 127.0.0.1)");
  app.add_option("--port", o->port, "port (default 8080; 0: any free port)")->check(CLI::Range(0, 65535));
  app.add_option("--parallel", o->batching.n_slots,
                 "requests generated at once, batched into shared passes over the weights (default 4); each slot "
                 "has a KV cache of the full context, whose memory is taken as the slot is first used")
      ->check(CLI::Range(1, HttpServer::kMaxConnections));
  app.add_option("--prompt-chunk", o->batching.prompt_chunk,
                 "most prompt tokens a pass takes while other requests are generating (default 16): fewer keep "
                 "their tokens coming during a long prompt, more fill the prompt sooner; a prompt alone takes up to " +
                     std::to_string(kPromptBatch))
      ->check(CLI::Range(int64_t{1}, kPromptBatch));
  return [o] { return serve(*o); };
}

const CommandRegistration serve_command{"serve", "serve the model over HTTP (OpenAI-style completions and chat)", setup_serve};

}  // namespace
}  // namespace lowbit::tools
