// CompletionService::parse: a request body's fields, checked one by one. A
// wrong field is an Error that names it (the reply is a 400).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "server/completion_service.h"
#include "server/request_fields.h"

namespace lowbit {

namespace {

using json = nlohmann::json;

constexpr int kMaxLogprobs = 20;   // alternatives per token, as OpenAI's top_logprobs
constexpr size_t kMaxPrompts = 64;  // choices (prompts x n) in one request
constexpr int64_t kMaxChoicesPerPrompt = 16;  // n

bool is_token_array(const json& j) {
  return j.is_array() && !j.empty() && std::all_of(j.begin(), j.end(), [](const json& x) { return x.is_number_integer(); });
}

}  // namespace

CompletionRequest::Prompt CompletionService::prompt_of_text(const std::string& text, bool parse_special) const {
  CompletionRequest::Prompt p;
  p.tokens = tokenizer_.encode(text, tokenizer_.vocab().add_bos, parse_special);
  p.added = tokenizer_.vocab().add_bos && tokenizer_.vocab().bos >= 0 && !p.tokens.empty() &&
            p.tokens[0] == tokenizer_.vocab().bos;
  return p;
}

CompletionRequest CompletionService::parse(const std::string& body, bool chat) const {
  const json j = parse_json_object(body);
  CompletionRequest r;
  r.chat = chat;
  if (chat) {
    if (!j.contains("messages") || !j["messages"].is_array() || j["messages"].empty())
      fail("field \"messages\" must be a non-empty array");
    std::vector<ChatMessage> messages;
    for (size_t i = 0; i < j["messages"].size(); ++i) {
      const json& m = j["messages"][i];
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
          !m["content"].is_string())
        fail("messages[", i, "] must be an object with string \"role\" and \"content\"");
      const std::string role = m["role"];
      if (role != "system" && role != "user" && role != "assistant")
        fail("messages[", i, "].role \"", role, "\" is not system, user or assistant");
      messages.push_back({role, m["content"].get<std::string>()});
    }
    r.prompts.push_back(prompt_of_text(render_chat(messages), /*parse_special=*/true));
  } else {
    // OpenAI's four forms: a text, token ids, or an array of either (a
    // choice per prompt). Token ids are taken as given (no BOS is added).
    if (!j.contains("prompt")) fail("field \"prompt\" is missing");
    const json& p = j["prompt"];
    const auto add = [&](const json& one, size_t i) {
      if (one.is_string()) return r.prompts.push_back(prompt_of_text(one.get<std::string>(), false));
      if (!is_token_array(one))
        fail("field \"prompt", i == SIZE_MAX ? std::string() : "[" + std::to_string(i) + "]",
             "\" must be a string or a non-empty array of token ids");
      CompletionRequest::Prompt t;
      for (const json& x : one) t.tokens.push_back(token_id(x, tokenizer_.n_vocab(), "prompt"));
      r.prompts.push_back(std::move(t));
    };
    if (p.is_string() || is_token_array(p)) {
      add(p, SIZE_MAX);
    } else if (p.is_array() && !p.empty()) {
      if (p.size() > kMaxPrompts) fail("field \"prompt\" holds ", p.size(), " prompts; at most ", kMaxPrompts);
      for (size_t i = 0; i < p.size(); ++i) add(p[i], i);
    } else {
      fail("field \"prompt\" must be a string, token ids, or a non-empty array of those");
    }
  }
  const int64_t n_ctx = model_.n_ctx();
  for (size_t i = 0; i < r.prompts.size(); ++i) {
    const size_t n = r.prompts[i].tokens.size();
    const std::string which = r.prompts.size() > 1 ? "prompt " + std::to_string(i) : "the prompt";
    if (n == 0) fail(which, " encodes to no tokens");
    if (static_cast<int64_t>(n) >= n_ctx) fail(which, " has ", n, " tokens; the context holds ", n_ctx);
  }

  const char* max_name = chat && j.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  r.max_tokens = integer_field(j, max_name, 0, n_ctx, chat ? -1 : 16);
  r.n = static_cast<int>(integer_field(j, "n", 1, kMaxChoicesPerPrompt, 1));
  if (r.prompts.size() * static_cast<size_t>(r.n) > kMaxPrompts)
    fail("fields \"prompt\" and \"n\" ask for ", r.prompts.size() * static_cast<size_t>(r.n), " choices; at most ", kMaxPrompts);
  SamplerParams& s = r.sampling;
  s.temperature = static_cast<float>(number_field(j, "temperature", 0, 100, s.temperature));
  s.top_p = static_cast<float>(number_field(j, "top_p", 0, 1, s.top_p));
  if (s.top_p == 0) fail("field \"top_p\" must be above 0");
  s.top_k = static_cast<int32_t>(integer_field(j, "top_k", 0, 1 << 30, s.top_k));
  s.min_p = static_cast<float>(number_field(j, "min_p", 0, 1, s.min_p));
  s.repeat_penalty = static_cast<float>(number_field(j, "repeat_penalty", 0.01, 100, s.repeat_penalty));
  s.presence_penalty = static_cast<float>(number_field(j, "presence_penalty", -2, 2, s.presence_penalty));
  s.frequency_penalty = static_cast<float>(number_field(j, "frequency_penalty", -2, 2, s.frequency_penalty));
  s.repeat_last_n = static_cast<int32_t>(integer_field(j, "repeat_last_n", -1, n_ctx, s.repeat_last_n));
  if (j.contains("seed") && !j["seed"].is_null()) {
    if (!j["seed"].is_number_integer()) fail("field \"seed\" must be an integer");
    s.seed = j["seed"].get<uint64_t>();
    r.seed_given = true;
  }
  r.stream = bool_field(j, "stream", false);
  if (j.contains("stream_options") && !j["stream_options"].is_null()) {
    const json& o = j["stream_options"];
    if (!r.stream) fail("field \"stream_options\" is only for \"stream\": true");
    if (!o.is_object()) fail("field \"stream_options\" must be an object");
    r.include_usage = bool_field(o, "include_usage", false);
  }
  if (r.stream && r.prompts.size() > 1) fail("field \"stream\": a stream takes one prompt, not ", r.prompts.size());
  if (r.stream && r.n > 1) fail("field \"stream\": a stream takes one choice, not n = ", r.n);
  if (j.contains("stop") && !j["stop"].is_null()) {
    const json& st = j["stop"];
    if (st.is_string()) {
      r.stop.push_back(st);
    } else if (st.is_array() && st.size() <= 4 && std::all_of(st.begin(), st.end(), [](const json& x) { return x.is_string(); })) {
      for (const json& x : st) r.stop.push_back(x);
    } else {
      fail("field \"stop\" must be a string or an array of at most 4 strings");
    }
    for (const std::string& x : r.stop)
      if (x.empty()) fail("field \"stop\" holds an empty string");
  }
  // Log-probabilities: chat asks with "logprobs": true and "top_logprobs": N;
  // completions with "logprobs": N, and "echo" returns the prompt too.
  if (chat) {
    const bool want = bool_field(j, "logprobs", false);
    const int64_t top = integer_field(j, "top_logprobs", 0, kMaxLogprobs, -1);
    if (top >= 0 && !want) fail("field \"top_logprobs\" needs \"logprobs\": true");
    if (want) r.logprobs = static_cast<int>(std::max<int64_t>(top, 0));
    if (j.contains("echo") && !j["echo"].is_null()) fail("field \"echo\" is for /v1/completions");
  } else {
    r.logprobs = static_cast<int>(integer_field(j, "logprobs", 0, kMaxLogprobs, -1));
    r.echo = bool_field(j, "echo", false);
    if (r.echo && r.stream) fail("field \"echo\" is not for streams");
  }
  return r;
}

}  // namespace lowbit
