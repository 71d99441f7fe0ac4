#include "server/completion_service.h"

#include <algorithm>
#include <ctime>
#include <exception>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "core/error.h"
#include "server/request_fields.h"

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

json byte_values(const std::string& s) {
  json b = json::array();
  for (const char c : s) b.push_back(static_cast<unsigned char>(c));
  return b;
}

}  // namespace

// One prompt's outcome. With logprobs, tokens[k] is the k-th token of the
// choice's text (the echoed prompt's, then the generated ones), starting at
// offsets[k] in `text`; a token nothing predicts (the first) has none.
struct CompletionService::Completion {
  std::string text;
  std::vector<size_t> offsets;
  std::vector<SampledToken> tokens;
  size_t sent = 0, sent_tokens = 0;  // a stream's text and tokens already sent
  bool stopped = false;              // a stop string ended it
  bool gone = false;                 // the stream's client left
  BatchedResult result;
};

CompletionService::CompletionService(const Model& model, const Tokenizer& tokenizer, ThreadPool& pool,
                                     std::string model_name, const BatchedOptions& batching)
    : model_(model),
      tokenizer_(tokenizer),
      model_name_(std::move(model_name)),
      chat_format_(detect_chat_format(model, tokenizer.vocab())),
      generator_(model, tokenizer, pool, batching) {}

std::string CompletionService::render_chat(const std::vector<ChatMessage>& messages) const {
  return lowbit::render_chat(chat_format_, messages);
}

// The logprobs of tokens [from, to) in the two shapes OpenAI uses: the
// completions API's parallel arrays, and chat's list of entries.
json CompletionService::logprobs_json(const Completion& c, bool chat, size_t from, size_t to) const {
  if (chat) {
    json content = json::array();
    for (size_t k = from; k < to; ++k) {
      const SampledToken& t = c.tokens[k];
      const std::string piece = tokenizer_.token_to_piece(t.id);
      json top = json::array();
      for (const TokenLogprob& e : t.top) {
        const std::string p = tokenizer_.token_to_piece(e.id);
        top.push_back({{"token", p}, {"logprob", e.logprob}, {"bytes", byte_values(p)}});
      }
      content.push_back({{"token", piece}, {"logprob", t.logprob}, {"bytes", byte_values(piece)}, {"top_logprobs", top}});
    }
    return {{"content", content}, {"refusal", nullptr}};
  }
  json tokens = json::array(), token_logprobs = json::array(), top_logprobs = json::array(), offsets = json::array();
  for (size_t k = from; k < to; ++k) {
    const SampledToken& t = c.tokens[k];
    tokens.push_back(tokenizer_.token_to_piece(t.id));
    offsets.push_back(c.offsets[k]);
    if (!t.has_logprobs) {
      token_logprobs.push_back(nullptr);
      top_logprobs.push_back(nullptr);
      continue;
    }
    token_logprobs.push_back(t.logprob);
    json top = json::object();
    for (const TokenLogprob& e : t.top) top[tokenizer_.token_to_piece(e.id)] = e.logprob;
    top_logprobs.push_back(top);
  }
  return {{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", top_logprobs}, {"text_offset", offsets}};
}

void CompletionService::handle(const HttpRequest& req, HttpResponder& out) {
  if (req.path == "/health" || req.path == "/v1/models") {
    if (req.method != "GET") return reply_json_error(out, 405, req.path + " takes GET");
    if (req.path == "/health") return reply_json(out, 200, {{"status", "ok"}});
    return reply_json(out, 200,
                      {{"object", "list"},
                       {"data", json::array({{{"id", model_name_}, {"object", "model"}, {"owned_by", "lowbit"}}})}});
  }
  const bool completions = req.path == "/v1/completions", chat = req.path == "/v1/chat/completions";
  const bool tokenizing = req.path == "/tokenize" || req.path == "/detokenize";
  if (!completions && !chat && !tokenizing) return reply_json_error(out, 404, "no endpoint " + req.path);
  if (req.method != "POST") return reply_json_error(out, 405, req.path + " takes POST");
  CompletionRequest r;
  try {
    if (req.path == "/tokenize") return tokenize(req.body, out);
    if (req.path == "/detokenize") return detokenize(req.body, out);
    r = parse(req.body, chat);
  } catch (const Error& e) {
    return reply_json_error(out, 400, e.what());
  }
  complete(r, out);
}

CompletionService::Completion CompletionService::run_prompt(const CompletionRequest& r, size_t index,
                                                           const ReplyHead& head, HttpResponder* stream) {
  const CompletionRequest::Prompt& p = r.prompts[index / static_cast<size_t>(r.n)];
  const bool logprobs = r.logprobs >= 0;
  Completion c;
  // echo: the prompt's text first, without a BOS the server added. Its
  // logprobs come with the result.
  if (r.echo)
    for (size_t i = p.added ? 1 : 0; i < p.tokens.size(); ++i) {
      if (logprobs) {
        c.offsets.push_back(c.text.size());
        c.tokens.push_back({p.tokens[i], false, 0, {}});
      }
      c.text += tokenizer_.token_to_piece(p.tokens[i]);
    }
  const size_t echoed = c.text.size();  // 0 in a stream: parse refuses echo there

  // Text is streamed as it comes, except what could still turn out to be the
  // start of a stop string or of a UTF-8 character.
  size_t hold = 0;
  for (const std::string& s : r.stop) hold = std::max(hold, s.size() - 1);
  std::string& text = c.text;
  BatchedRequest g;
  g.prompt = p.tokens;
  g.n_predict = r.max_tokens;
  g.sampling = r.sampling;
  // Distinct per request and per choice; a given seed gives the n choices of
  // a prompt seeds seed, seed + 1, ...
  if (!r.seed_given)
    g.sampling.seed = static_cast<uint64_t>(head.created) * 1000003u + static_cast<uint64_t>(head.number) * 64 + index;
  else
    g.sampling.seed += index % static_cast<size_t>(r.n);
  g.logprobs = r.logprobs;
  g.prompt_logprobs = r.echo && logprobs;
  // Called with each sampled token; false ends the request.
  auto on_token = [&](const SampledToken& token) {
    const size_t from = std::max(echoed, text.size() > hold ? text.size() - hold : 0);
    if (logprobs) {
      c.offsets.push_back(text.size());
      c.tokens.push_back(token);
    }
    text += tokenizer_.token_to_piece(token.id);
    for (const std::string& s : r.stop)
      if (const size_t at = text.find(s, from); at != std::string::npos) {
        text.resize(std::max(at, c.sent));
        c.stopped = true;
      }
    if (stream == nullptr) return !c.stopped;
    size_t ready = c.stopped ? text.size() : text.size() > hold ? text.size() - hold : 0;
    ready = utf8_boundary(text, std::max(ready, c.sent));
    if (ready > c.sent) {
      size_t upto = c.sent_tokens;
      while (upto < c.tokens.size() && c.offsets[upto] < ready) ++upto;
      if (!stream->chunk(event(r, head, text.substr(c.sent, ready - c.sent), c, upto))) c.gone = true;
    }
    c.sent = std::max(c.sent, ready);
    return !c.stopped && !c.gone;
  };
  c.result = generator_.generate(g, on_token);
  // A stop string's own tokens are not the choice's.
  if (c.stopped)
    while (c.tokens.size() > c.sent_tokens && c.offsets.back() >= text.size()) c.tokens.pop_back(), c.offsets.pop_back();
  if (r.echo && logprobs)  // the echoed tokens: prompt token i has prompt_logprobs[i - 1]
    for (size_t k = 0, i = p.added ? 1 : 0; i < p.tokens.size(); ++k, ++i)
      if (i > 0) c.tokens[k] = c.result.prompt_logprobs[i - 1];
  return c;
}

// A stream's chunk with text and the logprobs of tokens [c.sent_tokens, upto),
// which it marks sent.
std::string CompletionService::event(const CompletionRequest& r, const ReplyHead& head, const std::string& text,
                                     Completion& c, size_t upto) const {
  json choice = {{"index", 0}, {"finish_reason", nullptr}};
  if (r.chat)
    choice["delta"] = {{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text;
  choice["logprobs"] = r.logprobs >= 0 ? logprobs_json(c, r.chat, c.sent_tokens, upto) : json(nullptr);
  c.sent_tokens = upto;
  return "data: " + dump(chunk(r, head, json::array({choice}), json::object())) + "\n\n";
}

json CompletionService::chunk(const CompletionRequest& r, const ReplyHead& head, json choices,
                              const json& extra) const {
  json j = {{"id", head.id},
            {"object", r.chat ? "chat.completion.chunk" : "text_completion"},
            {"created", head.created},
            {"model", model_name_},
            {"choices", std::move(choices)}};
  j.update(extra);
  return j;
}

void CompletionService::complete(const CompletionRequest& r, HttpResponder& out) {
  ReplyHead head;
  head.number = next_id_++;
  head.id = (r.chat ? "chatcmpl-" : "cmpl-") + std::to_string(head.number);
  head.created = static_cast<int64_t>(std::time(nullptr));
  if (r.stream) out.begin_stream(200, "text/event-stream");
  // Several choices (prompts x n) run side by side: the generator batches
  // them into shared passes over the weights, as it does separate requests.
  const size_t n = r.prompts.size() * static_cast<size_t>(r.n);
  std::vector<Completion> done(n);
  std::vector<std::string> errors(n);
  auto run = [&](size_t i) {
    try {
      done[i] = run_prompt(r, i, head, r.stream ? &out : nullptr);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  };
  if (n == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) threads.emplace_back(run, i);
    for (std::thread& t : threads) t.join();
  }
  for (const std::string& e : errors)
    if (!e.empty()) {
      if (!r.stream) return reply_json_error(out, 500, e);
      throw Error(e);  // mid-stream: the connection closes without the final events
    }

  json choices = json::array();
  int64_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
  json timings;
  for (size_t i = 0; i < n; ++i) {
    Completion& c = done[i];
    const BatchedResult& res = c.result;
    const int64_t n_prompt = static_cast<int64_t>(r.prompts[i / static_cast<size_t>(r.n)].tokens.size());
    const int64_t n_gen = static_cast<int64_t>(res.generated.size());
    const bool full = (r.max_tokens >= 0 && n_gen >= r.max_tokens) || res.context_full;
    const std::string finish = c.stopped || !full ? "stop" : "length";
    if (i % static_cast<size_t>(r.n) == 0) {  // a prompt counts once, however many choices it has
      prompt_tokens += n_prompt;
      cached_tokens += res.cached;
    }
    completion_tokens += n_gen;
    // llama-server's fields: the prompt's passes (shared with other rows) up
    // to the first sampled token, then the tokens after it.
    const int64_t evaluated = n_prompt - res.cached;
    const auto per_second = [](int64_t k, double s) { return s > 0 ? static_cast<double>(k) / s : 0.0; };
    timings = {{"cache_n", res.cached},
               {"prompt_n", evaluated},
               {"prompt_ms", 1e3 * res.prompt_seconds},
               {"prompt_per_second", per_second(evaluated, res.prompt_seconds)},
               {"predicted_n", n_gen},
               {"predicted_ms", 1e3 * res.generate_seconds},
               {"predicted_per_second", per_second(std::max<int64_t>(0, n_gen - 1), res.generate_seconds)},
               {"queued_ms", 1e3 * res.wait_seconds}};
    json choice = {{"index", i}, {"finish_reason", finish}};
    const json logprobs = r.logprobs >= 0 ? logprobs_json(c, r.chat, c.sent_tokens, c.tokens.size()) : json(nullptr);
    if (r.stream) {
      if (c.gone) return;
      if (c.sent < c.text.size() || c.sent_tokens < c.tokens.size())
        out.chunk(event(r, head, c.text.substr(c.sent), c, c.tokens.size()));
      choice[r.chat ? "delta" : "text"] = r.chat ? json::object() : json("");
      choice["logprobs"] = nullptr;
      out.chunk("data: " + dump(chunk(r, head, json::array({choice}), {{"timings", timings}})) + "\n\n");
      continue;
    }
    if (r.chat)
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    else
      choice["text"] = c.text;
    choice["logprobs"] = logprobs;
    if (n > 1) choice["timings"] = timings;  // each choice's own; one choice's are the reply's
    choices.push_back(std::move(choice));
  }
  const json usage = {{"prompt_tokens", prompt_tokens},
                      {"completion_tokens", completion_tokens},
                      {"total_tokens", prompt_tokens + completion_tokens},
                      {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
  if (r.stream) {
    if (r.include_usage) out.chunk("data: " + dump(chunk(r, head, json::array(), {{"usage", usage}})) + "\n\n");
    out.chunk("data: [DONE]\n\n");
    out.end_stream();
    return;
  }
  json reply = {{"id", head.id},
                {"object", r.chat ? "chat.completion" : "text_completion"},
                {"created", head.created},
                {"model", model_name_},
                {"choices", choices},
                {"usage", usage}};
  if (n == 1) reply["timings"] = timings;
  reply_json(out, 200, reply);
}

// llama-server's /tokenize: {"content", "add_special" (false), "parse_special"
// (true), "with_pieces" (false)} -> {"tokens": ids, or {"id", "piece"} each}.
void CompletionService::tokenize(const std::string& body, HttpResponder& out) const {
  const json j = parse_json_object(body);
  if (!j.contains("content") || !j["content"].is_string()) fail("field \"content\" must be a string");
  const bool add_special = bool_field(j, "add_special", false), parse_special = bool_field(j, "parse_special", true);
  const bool with_pieces = bool_field(j, "with_pieces", false);
  const std::vector<int32_t> ids =
      tokenizer_.encode(j["content"].get<std::string>(), add_special && tokenizer_.vocab().add_bos, parse_special);
  json tokens = json::array();
  for (const int32_t t : ids)
    if (with_pieces)
      tokens.push_back({{"id", t}, {"piece", tokenizer_.token_to_piece(t)}});
    else
      tokens.push_back(t);
  reply_json(out, 200, {{"tokens", tokens}});
}

// llama-server's /detokenize: {"tokens": ids} -> {"content": their text}.
void CompletionService::detokenize(const std::string& body, HttpResponder& out) const {
  const json j = parse_json_object(body);
  if (!j.contains("tokens") || !j["tokens"].is_array()) fail("field \"tokens\" must be an array");
  std::string text;
  for (const json& t : j["tokens"]) text += tokenizer_.token_to_piece(token_id(t, tokenizer_.n_vocab(), "tokens"));
  reply_json(out, 200, {{"content", text}});
}

}  // namespace lowbit
