#include "server/completion_service.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.h"

namespace lowbit {

namespace {

using json = nlohmann::json;

// Model text can end inside a UTF-8 character (byte tokens); JSON strings must
// not, so invalid bytes become U+FFFD.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The longest prefix of text[0, end) that does not end inside a UTF-8 character.
size_t utf8_boundary(const std::string& text, size_t end) {
  size_t start = end;
  while (start > 0 && end - start < 4 && (static_cast<unsigned char>(text[start - 1]) & 0xC0) == 0x80) --start;
  if (start == 0) return end;
  const auto lead = static_cast<unsigned char>(text[start - 1]);
  const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return end - (start - 1) < need ? start - 1 : end;
}

void reply_json(HttpResponder& out, int status, const json& j) { out.send(status, "application/json", dump(j)); }


double number_field(const json& j, const char* name, double lo, double hi, double fallback) {
  if (!j.contains(name) || j[name].is_null()) return fallback;
  if (!j[name].is_number()) fail("field \"", name, "\" must be a number");
  const double v = j[name].get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) fail("field \"", name, "\" = ", v, " is outside [", lo, ", ", hi, "]");
  return v;
}

int64_t integer_field(const json& j, const char* name, int64_t lo, int64_t hi, int64_t fallback) {
  if (!j.contains(name) || j[name].is_null()) return fallback;
  if (!j[name].is_number_integer()) fail("field \"", name, "\" must be an integer");
  const int64_t v = j[name].get<int64_t>();
  if (v < lo || v > hi) fail("field \"", name, "\" = ", v, " is outside [", lo, ", ", hi, "]");
  return v;
}

}  // namespace

CompletionService::CompletionService(const Model& model, const Tokenizer& tokenizer, ThreadPool& pool,
                                     std::string model_name, const BatchedOptions& batching)
    : model_(model),
      tokenizer_(tokenizer),
      model_name_(std::move(model_name)),
      generator_(model, tokenizer, pool, batching) {}

std::string CompletionService::render_chat(const std::vector<ChatMessage>& messages) const {
  return lowbit::render_chat(model_, tokenizer_.vocab(), messages);
}

CompletionRequest CompletionService::parse(const std::string& body, bool chat) const {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    fail("request body is not JSON: ", e.what());
  }
  if (!j.is_object()) fail("request body must be a JSON object");
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
    r.prompt = render_chat(messages);
  } else {
    if (!j.contains("prompt") || !j["prompt"].is_string()) fail("field \"prompt\" must be a string");
    r.prompt = j["prompt"];
  }
  const int64_t n_ctx = model_.n_ctx();
  const char* max_name = chat && j.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  r.max_tokens = integer_field(j, max_name, 0, n_ctx, chat ? -1 : 16);
  if (integer_field(j, "n", 1, 1 << 20, 1) != 1) fail("field \"n\": only 1 completion per request");
  SamplerParams& s = r.sampling;
  s.temperature = static_cast<float>(number_field(j, "temperature", 0, 100, s.temperature));
  s.top_p = static_cast<float>(number_field(j, "top_p", 0, 1, s.top_p));
  s.top_k = static_cast<int32_t>(integer_field(j, "top_k", 0, 1 << 30, s.top_k));
  s.min_p = static_cast<float>(number_field(j, "min_p", 0, 1, s.min_p));
  s.repeat_penalty = static_cast<float>(number_field(j, "repeat_penalty", 0.01, 100, s.repeat_penalty));
  if (j.contains("seed") && !j["seed"].is_null()) {
    if (!j["seed"].is_number_integer()) fail("field \"seed\" must be an integer");
    s.seed = j["seed"].get<uint64_t>();
    r.seed_given = true;
  }
  if (j.contains("stream") && !j["stream"].is_null()) {
    if (!j["stream"].is_boolean()) fail("field \"stream\" must be true or false");
    r.stream = j["stream"];
  }
  if (j.contains("stream_options") && !j["stream_options"].is_null()) {
    const json& o = j["stream_options"];
    if (!r.stream) fail("field \"stream_options\" is only for \"stream\": true");
    if (!o.is_object()) fail("field \"stream_options\" must be an object");
    if (o.contains("include_usage") && !o["include_usage"].is_null()) {
      if (!o["include_usage"].is_boolean()) fail("field \"stream_options.include_usage\" must be true or false");
      r.include_usage = o["include_usage"];
    }
  }
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
  return r;
}

void CompletionService::handle(const HttpRequest& req, HttpResponder& out) {
  const bool completions = req.path == "/v1/completions", chat = req.path == "/v1/chat/completions";
  if (req.path == "/health" || req.path == "/v1/models") {
    if (req.method != "GET") return reply_json_error(out, 405, req.path + " takes GET");
    if (req.path == "/health") return reply_json(out, 200, {{"status", "ok"}});
    return reply_json(out, 200,
                      {{"object", "list"},
                       {"data", json::array({{{"id", model_name_}, {"object", "model"}, {"owned_by", "lowbit"}}})}});
  }
  if (!completions && !chat) return reply_json_error(out, 404, "no endpoint " + req.path);
  if (req.method != "POST") return reply_json_error(out, 405, req.path + " takes POST");
  CompletionRequest r;
  try {
    r = parse(req.body, chat);
  } catch (const Error& e) {
    return reply_json_error(out, 400, e.what());
  }
  complete(r, out);
}

void CompletionService::complete(const CompletionRequest& r, HttpResponder& out) {
  const std::vector<int32_t> prompt = tokenizer_.encode(r.prompt, tokenizer_.vocab().add_bos, /*parse_special=*/r.chat);
  const int64_t n_ctx = model_.n_ctx();
  if (prompt.empty()) return reply_json_error(out, 400, "the prompt encodes to no tokens");
  if (static_cast<int64_t>(prompt.size()) >= n_ctx)
    return reply_json_error(out, 400, "the prompt has " + std::to_string(prompt.size()) + " tokens; the context holds " +
                                     std::to_string(n_ctx));
  const int64_t number = next_id_++;
  const std::string id = (r.chat ? "chatcmpl-" : "cmpl-") + std::to_string(number);
  const int64_t created = static_cast<int64_t>(std::time(nullptr));
  // A stream's chunk: `extra` adds fields (the last one's timings), and a
  // null `text` makes a chunk with no choices (the usage chunk).
  auto event = [&](const std::string* text, const json& finish, const json& extra = json::object()) {
    json chunk = {{"id", id},
                  {"object", r.chat ? "chat.completion.chunk" : "text_completion"},
                  {"created", created},
                  {"model", model_name_},
                  {"choices", json::array()}};
    if (text != nullptr) {
      json choice = {{"index", 0}, {"finish_reason", finish}};
      if (r.chat)
        choice["delta"] =
            text->empty() && !finish.is_null() ? json::object() : json{{"role", "assistant"}, {"content", *text}};
      else
        choice["text"] = *text, choice["logprobs"] = nullptr;
      chunk["choices"].push_back(choice);
    }
    chunk.update(extra);
    return "data: " + dump(chunk) + "\n\n";
  };

  // Text is streamed as it comes, except what could still turn out to be the
  // start of a stop string or of a UTF-8 character.
  size_t hold = 0;
  for (const std::string& s : r.stop) hold = std::max(hold, s.size() - 1);
  std::string text;
  size_t sent = 0;
  bool stopped = false, gone = false;
  if (r.stream) out.begin_stream(200, "text/event-stream");
  BatchedRequest g;
  g.prompt = prompt;
  g.n_predict = r.max_tokens;
  g.sampling = r.sampling;
  if (!r.seed_given) g.sampling.seed = static_cast<uint64_t>(created) * 1000003u + static_cast<uint64_t>(number);
  // Called with each sampled token; false ends the request.
  auto on_token = [&](int32_t token) {
    const size_t from = text.size() > hold ? text.size() - hold : 0;
    text += tokenizer_.token_to_piece(token);
    for (const std::string& s : r.stop)
      if (const size_t at = text.find(s, from); at != std::string::npos) {
        text.resize(std::max(at, sent));
        stopped = true;
      }
    if (!r.stream) return !stopped;
    size_t ready = stopped ? text.size() : text.size() > hold ? text.size() - hold : 0;
    ready = utf8_boundary(text, std::max(ready, sent));
    if (ready > sent) {
      const std::string piece = text.substr(sent, ready - sent);
      if (!out.chunk(event(&piece, nullptr))) gone = true;
    }
    sent = std::max(sent, ready);
    return !stopped && !gone;
  };
  BatchedResult result;
  try {
    result = generator_.generate(g, on_token);
  } catch (const Error& e) {
    if (!r.stream) return reply_json_error(out, 500, e.what());
    throw;  // mid-stream: the connection closes without the final events
  }
  const int64_t same = result.cached;
  const int64_t n_gen = static_cast<int64_t>(result.generated.size());
  const bool full = (r.max_tokens >= 0 && n_gen >= r.max_tokens) || result.context_full;
  const std::string finish = stopped || !full ? "stop" : "length";
  const json usage = {{"prompt_tokens", prompt.size()},
                      {"completion_tokens", n_gen},
                      {"total_tokens", static_cast<int64_t>(prompt.size()) + n_gen},
                      {"prompt_tokens_details", {{"cached_tokens", same}}}};
  // llama-server's fields: the prompt's passes (shared with other requests'
  // rows) up to the first sampled token, then the tokens after it.
  const int64_t evaluated = static_cast<int64_t>(prompt.size()) - same;
  const auto per_second = [](int64_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; };
  const json timings = {{"cache_n", same},
                        {"prompt_n", evaluated},
                        {"prompt_ms", 1e3 * result.prompt_seconds},
                        {"prompt_per_second", per_second(evaluated, result.prompt_seconds)},
                        {"predicted_n", n_gen},
                        {"predicted_ms", 1e3 * result.generate_seconds},
                        {"predicted_per_second", per_second(std::max<int64_t>(0, n_gen - 1), result.generate_seconds)},
                        {"queued_ms", 1e3 * result.wait_seconds}};
  if (r.stream) {
    if (gone) return;
    const std::string rest = text.substr(sent), none;
    if (!rest.empty()) out.chunk(event(&rest, nullptr));
    out.chunk(event(&none, finish, {{"timings", timings}}));
    if (r.include_usage) out.chunk(event(nullptr, nullptr, {{"usage", usage}}));
    out.chunk("data: [DONE]\n\n");
    out.end_stream();
    return;
  }
  json choice = {{"index", 0}, {"finish_reason", finish}};
  if (r.chat)
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text, choice["logprobs"] = nullptr;
  reply_json(out, 200,
             {{"id", id},
              {"object", r.chat ? "chat.completion" : "text_completion"},
              {"created", created},
              {"model", model_name_},
              {"choices", json::array({choice})},
              {"usage", usage},
              {"timings", timings}});
}

}  // namespace lowbit
