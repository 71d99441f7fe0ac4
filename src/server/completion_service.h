// The OpenAI-style endpoints of `lowbit serve`, over one loaded model:
//   GET  /health               {"status":"ok"}
//   GET  /v1/models            the one model
//   POST /v1/completions       prompt -> text (stream: server-sent events)
//   POST /v1/chat/completions  messages -> the assistant's reply (stream too)
// One sequence at a time: requests wait their turn for the decoder, and
// one that begins with the previous request's prompt and reply (a chat's next
// turn) reuses their KV cache. Bad requests get a 4xx JSON error naming
// the field; other requests go on.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/model.h"
#include "runtime/chat_format.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
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
  std::vector<std::string> stop;  // stop strings (not included in the text)
};

class CompletionService {
 public:
  CompletionService(const Model& model, const Tokenizer& tokenizer, ThreadPool& pool, std::string model_name);
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
  std::mutex session_mutex_;
  Session session_;      // under session_mutex_: keeps the last request's KV cache
  int64_t next_id_ = 1;  // under session_mutex_
};

}  // namespace lowbit
