// The OpenAI-style endpoints of `lowbit serve`, over one loaded model:
//   GET  /health               {"status":"ok"}
//   GET  /v1/models            the one model
//   POST /v1/completions       prompt(s) -> text (stream: server-sent events);
//                              logprobs N, echo (the prompt's logprobs too)
//   POST /v1/chat/completions  messages -> the assistant's reply (stream too);
//                              logprobs, top_logprobs
//   POST /tokenize             {"content"} -> {"tokens"} (llama-server's)
//   POST /detokenize           {"tokens"} -> {"content"}
// Up to batching.n_slots requests generate at once, batched into shared passes
// over the weights (runtime/batched_generator.h); more wait for a slot. A request
// that begins with an earlier request's prompt and reply (a chat's next turn)
// reuses their KV cache when that slot is free. Bad requests get a 4xx JSON
// error naming the field; other requests go on.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
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
  struct Prompt {
    std::vector<int32_t> tokens;  // as evaluated
    bool added = false;           // tokens[0] is a BOS the server put in front of the text
  };
  // Completions: one or more prompts (a choice each); chat: the messages rendered.
  std::vector<Prompt> prompts;
  bool chat = false;
  int n = 1;  // choices per prompt, each sampled with its own seed
  int64_t max_tokens = 128;
  SamplerParams sampling;
  bool seed_given = false;
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage: a last chunk with usage
  std::vector<std::string> stop;  // stop strings (not included in the text)
  int logprobs = -1;              // < 0: none; else the sampled tokens' logprobs and this many alternatives
  bool echo = false;              // completions: the prompt's text (and logprobs) before the completion's
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
  ChatFormat chat_format() const { return chat_format_; }

 private:
  struct Completion;
  // What every chunk and reply of one request carries.
  struct ReplyHead {
    std::string id;  // "cmpl-N" or "chatcmpl-N"
    int64_t created = 0;
    int64_t number = 0;  // N
  };
  // Choice `index`'s generation (of prompt index / n); a stream's pieces go
  // out as they are ready.
  Completion run_prompt(const CompletionRequest& r, size_t index, const ReplyHead& head, HttpResponder* stream);
  // A stream's event: text and the logprobs of c.tokens [c.sent_tokens, upto), marked sent.
  std::string event(const CompletionRequest& r, const ReplyHead& head, const std::string& text, Completion& c,
                    size_t upto) const;
  // A stream chunk's fields, then extra's.
  nlohmann::json chunk(const CompletionRequest& r, const ReplyHead& head, nlohmann::json choices,
                       const nlohmann::json& extra) const;
  nlohmann::json logprobs_json(const Completion& c, bool chat, size_t from, size_t to) const;
  void complete(const CompletionRequest& r, HttpResponder& out);
  void tokenize(const std::string& body, HttpResponder& out) const;
  void detokenize(const std::string& body, HttpResponder& out) const;
  CompletionRequest::Prompt prompt_of_text(const std::string& text, bool parse_special) const;

  const Model& model_;
  const Tokenizer& tokenizer_;
  std::string model_name_;
  ChatFormat chat_format_;  // detected once: detection may scan the vocabulary
  BatchedGenerator generator_;
  std::atomic<int64_t> next_id_{1};
};

}  // namespace lowbit
