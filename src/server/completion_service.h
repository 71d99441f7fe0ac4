// The OpenAI-style endpoints of `lowbit serve`, over one loaded model:
//   GET  /health               {"status":"ok"}
//   GET  /v1/models            the one model
//   POST /v1/completions       prompt -> text (stream: server-sent events)
//   POST /v1/chat/completions  messages -> the assistant's reply (stream too)
// Up to batching.n_slots requests generate at once, batched into shared passes
// over the weights (runtime/batched_generator.h); more wait for a slot. A request
// that begins with an earlier request's prompt and reply (a chat's next turn)
// reuses their KV cache when that slot is free. Bad requests get a 4xx JSON
// error naming the field; other requests go on.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/model.h"
#include "runtime/chat_format.h"
#include "runtime/sampler.h"
#include "runtime/batched_generator.h"
#include "server/http_server.h"
#include "tokenizer/tokenizer.h"

namespace lowbit {

// A request's generation settings, parsed and checked (completion_request.cpp).
struct CompletionRequest {
  std::string prompt;              // completions: the text; chat: rendered from the messages
  bool chat = false;
  int64_t max_tokens = 128;
  SamplerParams sampling;
  bool seed_given = false;
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage: a last chunk with usage
  std::vector<std::string> stop;  // stop strings (not included in the text)
};

class CompletionService {
 public:
  CompletionService(const Model& model, const Tokenizer& tokenizer, ThreadPool& pool, std::string model_name,
                    const BatchedOptions& batching);
  void handle(const HttpRequest& req, HttpResponder& out);

  // Parses a /v1/completions (chat = false) or /v1/chat/completions body; throws
  // Error naming the field that is wrong.
  CompletionRequest parse(const std::string& body, bool chat) const;
  // The chat prompt for messages, in the model's format (runtime/chat_format.h).
  std::string render_chat(const std::vector<ChatMessage>& messages) const;

 private:
  void complete(const CompletionRequest& r, HttpResponder& out);

  const Model& model_;
  const Tokenizer& tokenizer_;
  std::string model_name_;
  BatchedGenerator generator_;
  std::atomic<int64_t> next_id_{1};
};

}  // namespace lowbit
