// `lowbit serve`'s endpoints over a real socket: a tiny dummy model behind
// HttpServer + CompletionService, talked to by a raw HTTP client. Greedy text
// must be what generate_text gives for the same prompt; streaming must give
// the same text in pieces; bad requests get their 4xx; the server goes on.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "fixtures.h"
#include "model/decoder.h"
#include "model/model.h"
#include "runtime/dummy_model.h"
#include "runtime/generator.h"
#include "server/completion_service.h"
#include "server/http_server.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"

namespace lowbit {
namespace {

using json = nlohmann::json;

struct Reply {
  int status = 0;
  std::string body;  // de-chunked
};

// Sends raw bytes, reads until the server closes, parses status and body.
Reply raw_request(int port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may reply and close before reading it all (413)
    off += static_cast<size_t>(n);
  }
  std::string in;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) in.append(buf, static_cast<size_t>(n));
  ::close(fd);
  Reply r;
  const size_t head_end = in.find("\r\n\r\n");
  if (in.rfind("HTTP/1.1 ", 0) != 0 || head_end == std::string::npos) return r;
  r.status = std::stoi(in.substr(9, 3));
  const std::string head = in.substr(0, head_end);
  std::string body = in.substr(head_end + 4);
  if (head.find("Transfer-Encoding: chunked") == std::string::npos) {
    r.body = body;
    return r;
  }
  for (size_t p = 0;;) {
    const size_t eol = body.find("\r\n", p);
    if (eol == std::string::npos) break;
    const size_t size = std::stoul(body.substr(p, eol - p), nullptr, 16);
    if (size == 0) break;
    r.body += body.substr(eol + 2, size);
    p = eol + 2 + size + 2;
  }
  return r;
}

Reply request(int port, const std::string& method, const std::string& path, const std::string& body = "") {
  return raw_request(port, method + " " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body);
}

// The text of a stream's events, and whether it ended with [DONE].
std::string stream_text(const std::string& events, bool chat, bool* done, std::string* finish) {
  std::string text;
  *done = false;
  for (size_t p = 0; (p = events.find("data: ", p)) != std::string::npos;) {
    const size_t end = events.find("\n\n", p);
    const std::string data = events.substr(p + 6, end - p - 6);
    p = end;
    if (data == "[DONE]") {
      *done = true;
      continue;
    }
    const json j = json::parse(data);
    if (j["choices"].empty()) continue;  // the usage chunk (stream_options.include_usage)
    const json& c = j["choices"][0];
    if (!c["finish_reason"].is_null()) *finish = c["finish_reason"];
    if (chat) {
      if (c["delta"].contains("content")) text += c["delta"]["content"].get<std::string>();
    } else {
      text += c["text"].get<std::string>();
    }
  }
  return text;
}

class CompletionServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pool_ = std::make_unique<ThreadPool>(2);
    const std::string path = testing::temp_path("serve-tiny.gguf");
    DummyModelOptions opt;
    opt.shape = "tiny";
    opt.seed = 3;
    write_dummy_model(opt, path, *pool_);
    model_ = Model::load(path, LoadOptions{}, *pool_);
    tokenizer_ = Tokenizer::create(read_vocab_gguf(*model_->gguf()));
    BatchedOptions batching;
    batching.n_slots = 3;
    service_ = std::make_unique<CompletionService>(*model_, *tokenizer_, *pool_, "tiny", batching);
    server_ = std::make_unique<HttpServer>("127.0.0.1", 0);
    thread_ = std::thread([] { server_->serve([](const HttpRequest& q, HttpResponder& a) { service_->handle(q, a); }); });
  }
  static void TearDownTestSuite() {
    server_->stop();
    thread_.join();
    server_.reset();
    service_.reset();
    tokenizer_.reset();
    model_.reset();  // before static destruction: the model's buffers belong to core's allocator
    pool_.reset();
  }
  static int port() { return server_->port(); }

  // What generate_text gives, greedy, after prompt (the reference): its tokens,
  // and its text in *text when asked.
  static std::vector<int32_t> greedy_ids(const std::vector<int32_t>& prompt, int64_t n, std::string* text = nullptr) {
    Decoder decoder(*model_, *pool_);
    GenerateOptions g;
    g.n_predict = n;
    g.sampling.temperature = 0;
    return generate_text(decoder, *tokenizer_, prompt, g, [&](std::string_view piece) {
             if (text != nullptr) *text += piece;
           }).generated;
  }
  static std::string greedy_text(const std::string& prompt, int64_t n) {
    std::string text;
    greedy_ids(tokenizer_->encode(prompt, tokenizer_->vocab().add_bos, false), n, &text);
    return text;
  }

  static inline std::unique_ptr<ThreadPool> pool_;
  static inline std::unique_ptr<Model> model_;
  static inline std::unique_ptr<Tokenizer> tokenizer_;
  static inline std::unique_ptr<CompletionService> service_;
  static inline std::unique_ptr<HttpServer> server_;
  static inline std::thread thread_;
};

TEST_F(CompletionServer, HealthAndModels) {
  const Reply h = request(port(), "GET", "/health");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(json::parse(h.body)["status"], "ok");
  const Reply m = request(port(), "GET", "/v1/models");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(json::parse(m.body)["data"][0]["id"], "tiny");
}

TEST_F(CompletionServer, GreedyCompletionIsTheGeneratorsText) {
  const std::string want = greedy_text("Once upon", 12);
  ASSERT_FALSE(want.empty());
  const Reply r = request(port(), "POST", "/v1/completions", R"({"prompt":"Once upon","max_tokens":12,"temperature":0})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 12);
  // The JSON text is the generator's with invalid UTF-8 replaced: compare the same way.
  EXPECT_EQ(j["choices"][0]["text"], json::parse(json(want).dump(-1, ' ', false, json::error_handler_t::replace)));
}

TEST_F(CompletionServer, StreamGivesTheSameTextInPieces) {
  const Reply whole = request(port(), "POST", "/v1/completions", R"({"prompt":"Once upon","max_tokens":12,"temperature":0})");
  const Reply streamed =
      request(port(), "POST", "/v1/completions", R"({"prompt":"Once upon","max_tokens":12,"temperature":0,"stream":true})");
  ASSERT_EQ(streamed.status, 200);
  bool done = false;
  std::string finish;
  const std::string text = stream_text(streamed.body, false, &done, &finish);
  EXPECT_TRUE(done);
  EXPECT_EQ(finish, "length");
  EXPECT_GT(std::count(streamed.body.begin(), streamed.body.end(), '\n'), 6) << "one event per piece";
  EXPECT_EQ(text, json::parse(whole.body)["choices"][0]["text"].get<std::string>());
}

// Every reply says where its time went (llama-server's "timings"), and a
// stream asked for usage ends with a chunk holding it, before [DONE].
TEST_F(CompletionServer, TimingsAndStreamUsageAddUp) {
  const Reply whole = request(port(), "POST", "/v1/completions", R"({"prompt":"Once upon","max_tokens":8,"temperature":0})");
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json j = json::parse(whole.body);
  const json& t = j["timings"];
  EXPECT_EQ(t["predicted_n"], j["usage"]["completion_tokens"]);
  EXPECT_EQ(t["prompt_n"].get<int>() + t["cache_n"].get<int>(), j["usage"]["prompt_tokens"].get<int>());
  EXPECT_GT(t["prompt_ms"].get<double>(), 0.0);
  EXPECT_GT(t["predicted_ms"].get<double>(), 0.0) << "8 tokens: 7 passes after the first";
  EXPECT_GT(t["predicted_per_second"].get<double>(), 0.0);
  EXPECT_GE(t["queued_ms"].get<double>(), 0.0);

  const Reply streamed = request(port(), "POST", "/v1/completions",
                                 R"({"prompt":"Once upon","max_tokens":8,"temperature":0,"stream":true,)"
                                 R"("stream_options":{"include_usage":true}})");
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  std::vector<json> chunks;
  bool done = false;
  for (size_t p = 0; (p = streamed.body.find("data: ", p)) != std::string::npos;) {
    const size_t end = streamed.body.find("\n\n", p);
    const std::string data = streamed.body.substr(p + 6, end - p - 6);
    p = end;
    if (data == "[DONE]") {
      done = true;
      continue;
    }
    ASSERT_FALSE(done) << "a chunk after [DONE]";
    chunks.push_back(json::parse(data));
  }
  ASSERT_TRUE(done);
  ASSERT_GE(chunks.size(), 3u);
  const json& usage = chunks.back();
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], j["usage"]["completion_tokens"]);
  EXPECT_EQ(usage["usage"]["prompt_tokens"], j["usage"]["prompt_tokens"]);
  const json& last = chunks[chunks.size() - 2];
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(last["timings"]["predicted_n"], 8);
  for (size_t i = 0; i + 2 < chunks.size(); ++i) EXPECT_FALSE(chunks[i].contains("timings")) << i;
}

TEST_F(CompletionServer, StopStringEndsTheTextBeforeIt) {
  const std::string full =
      json::parse(request(port(), "POST", "/v1/completions", R"({"prompt":"Once upon","max_tokens":24,"temperature":0})").body)
          ["choices"][0]["text"];
  // A stop string from the middle of the greedy text: the reply is what comes before it.
  size_t at = 6;
  while (at < full.size() && (static_cast<unsigned char>(full[at]) & 0x80)) ++at;  // start on an ASCII byte
  ASSERT_LT(at + 2, full.size()) << full;
  const std::string stop = full.substr(at, 2);
  const std::string want = full.substr(0, full.find(stop));
  // With logprobs, the tokens are those that start before the stop string.
  const std::vector<int32_t> ids = greedy_ids(tokenizer_->encode("Once upon", tokenizer_->vocab().add_bos, false), 24);
  std::string raw;
  size_t n_before = 0;
  for (const int32_t id : ids) raw += tokenizer_->token_to_piece(id);
  for (size_t k = 0, start = 0; k < ids.size(); start += tokenizer_->token_to_piece(ids[k]).size(), ++k)
    n_before += start < raw.find(stop);
  for (const bool stream : {false, true}) {
    const json req = {{"prompt", "Once upon"}, {"max_tokens", 24}, {"temperature", 0},
                      {"stop", {stop}},        {"stream", stream},  {"logprobs", 0}};
    const Reply r = request(port(), "POST", "/v1/completions", req.dump());
    ASSERT_EQ(r.status, 200);
    std::string text, finish;
    bool done = true;
    size_t n_tokens = 0;
    if (stream) {
      text = stream_text(r.body, false, &done, &finish);
      for (size_t p = 0; (p = r.body.find("data: {", p)) != std::string::npos; ++p) {
        const json j = json::parse(r.body.substr(p + 6, r.body.find("\n\n", p) - p - 6));
        if (!j["choices"].empty() && !j["choices"][0]["logprobs"].is_null())
          n_tokens += j["choices"][0]["logprobs"]["tokens"].size();
      }
    } else {
      const json j = json::parse(r.body);
      text = j["choices"][0]["text"];
      finish = j["choices"][0]["finish_reason"];
      n_tokens = j["choices"][0]["logprobs"]["tokens"].size();
    }
    EXPECT_EQ(text, want) << "stream " << stream << ", stop " << stop;
    EXPECT_EQ(finish, "stop");
    EXPECT_TRUE(done);
    EXPECT_EQ(n_tokens, n_before) << "stream " << stream;
  }
}

TEST_F(CompletionServer, ChatRendersTheModelsFormat) {
  // The tiny shape is BitNet b1.58 2B-4T's architecture: "Role: content<|eot_id|>" turns.
  EXPECT_EQ(service_->render_chat({{"system", "Be brief."}, {"user", "Hi"}}),
            "System: Be brief.<|eot_id|>User: Hi<|eot_id|>Assistant: ");
  const Reply r = request(port(), "POST", "/v1/chat/completions",
                          R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":5,"temperature":0,"stream":true})");
  ASSERT_EQ(r.status, 200);
  bool done = false;
  std::string finish;
  stream_text(r.body, true, &done, &finish);
  EXPECT_TRUE(done);
  const Reply whole =
      request(port(), "POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":5,"temperature":0})");
  ASSERT_EQ(whole.status, 200);
  const json j = json::parse(whole.body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 5);
}

TEST_F(CompletionServer, BadRequestsGetTheirStatusAndTheServerGoesOn) {
  struct Case {
    std::string method, path, body;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"POST", "/v1/completions", "not json", 400, "not JSON"},
      {"POST", "/v1/completions", "[1,2]", 400, "JSON object"},
      {"POST", "/v1/completions", R"({"max_tokens":3})", 400, "prompt"},
      {"POST", "/v1/completions", R"({"prompt":"a","max_tokens":100000})", 400, "max_tokens"},
      {"POST", "/v1/completions", R"({"prompt":"a","temperature":"hot"})", 400, "temperature"},
      {"POST", "/v1/completions", R"({"prompt":"a","top_p":2})", 400, "top_p"},
      {"POST", "/v1/completions", R"({"prompt":"a","stop":["x",""]})", 400, "stop"},
      {"POST", "/v1/completions", R"({"prompt":"a","n":17})", 400, "[1, 16]"},
      {"POST", "/v1/completions", R"({"prompt":"a","n":2,"stream":true})", 400, "one choice"},
      {"POST", "/v1/completions", R"({"prompt":["a","b","c","d","e"],"n":16})", 400, "80 choices"},
      {"POST", "/v1/completions", R"({"prompt":"a","stream_options":{"include_usage":true}})", 400, "stream_options"},
      {"POST", "/v1/completions", R"({"prompt":"a","stream":true,"stream_options":{"include_usage":1}})", 400,
       "include_usage"},
      {"POST", "/v1/completions", R"({"prompt":")" + std::string(3000, 'z') + R"("})", 400, "context"},
      {"POST", "/v1/chat/completions", R"({"messages":[]})", 400, "messages"},
      {"POST", "/v1/chat/completions", R"({"messages":[{"role":"robot","content":"x"}]})", 400, "robot"},
      {"GET", "/v1/completions", "", 405, "POST"},
      {"POST", "/health", "", 405, "GET"},
      {"GET", "/v2/anything", "", 404, "/v2/anything"},
      {"POST", "/v1/completions", R"({"prompt":"a","logprobs":21})", 400, "logprobs"},
      {"POST", "/v1/completions", R"({"prompt":"a","logprobs":true})", 400, "logprobs"},
      {"POST", "/v1/completions", R"({"prompt":"a","echo":true,"stream":true})", 400, "echo"},
      {"POST", "/v1/completions", R"({"prompt":[5,-1]})", 400, "vocabulary"},
      {"POST", "/v1/completions", R"({"prompt":[5,18446744073709551615]})", 400, "vocabulary"},
      {"POST", "/v1/completions", R"({"prompt":[5,1.5]})", 400, "prompt"},
      {"POST", "/v1/completions", R"({"prompt":[]})", 400, "prompt"},
      {"POST", "/v1/completions", R"({"prompt":["a",[3,4],7]})", 400, "prompt[2]"},
      {"POST", "/v1/completions", R"({"prompt":["a","b"],"stream":true})", 400, "one prompt"},
      {"POST", "/v1/completions", R"({"prompt":"a","max_tokens":18446744073709551615})", 400, "max_tokens"},
      {"POST", "/v1/completions", R"({"prompt":"a","presence_penalty":3})", 400, "presence_penalty"},
      {"POST", "/v1/completions", R"({"prompt":"a","frequency_penalty":"x"})", 400, "frequency_penalty"},
      {"POST", "/v1/completions", R"({"prompt":"a","top_p":0})", 400, "top_p"},
      {"POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":2})", 400,
       "top_logprobs"},
      {"POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"echo":true})", 400, "echo"},
      {"POST", "/tokenize", R"({"text":"x"})", 400, "content"},
      {"POST", "/detokenize", R"({"tokens":["a"]})", 400, "tokens"},
      {"POST", "/detokenize", R"({"tokens":[99999999]})", 400, "vocabulary"},
      {"GET", "/tokenize", "", 405, "POST"},
  };
  for (const Case& c : cases) {
    const Reply r = request(port(), c.method, c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path << " " << c.body.substr(0, 80);
    EXPECT_NE(r.body.find(c.says), std::string::npos) << r.body;
  }
  // Over the limits of the HTTP layer.
  EXPECT_EQ(raw_request(port(), "POST /v1/completions HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n").status, 413);
  EXPECT_EQ(raw_request(port(), "GET /health HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n").status, 431);
  EXPECT_EQ(raw_request(port(), "garbage\r\n\r\n").status, 400);
  EXPECT_EQ(raw_request(port(), "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").status, 411);
  EXPECT_EQ(request(port(), "GET", "/health").status, 200);
}

// What a JSON reply holds for text: invalid UTF-8 becomes U+FFFD.
json as_json_text(const std::string& s) { return json::parse(json(s).dump(-1, ' ', false, json::error_handler_t::replace)); }

// The model's log-softmax at a position of a token sequence, alone.
std::vector<double> log_softmax_at(const Model& model, ThreadPool& pool, const std::vector<int32_t>& seq, size_t pos) {
  const int64_t V = model.config().n_vocab;
  Decoder d(model, pool);
  std::vector<float> logits(seq.size() * static_cast<size_t>(V));
  d.eval(seq.data(), static_cast<int64_t>(seq.size()), logits.data(), /*all_logits=*/true);
  const float* row = logits.data() + pos * static_cast<size_t>(V);
  double z = 0;
  for (int64_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(row[v]));
  std::vector<double> lp(static_cast<size_t>(V));
  for (int64_t v = 0; v < V; ++v) lp[static_cast<size_t>(v)] = row[v] - std::log(z);
  return lp;
}

// logprobs: N gives each generated token's log-probability under the model
// and its N likeliest alternatives; the pieces spell the text, at their
// offsets (in bytes). A stream gives the same, split over its chunks; chat
// gives an entry per token with its bytes.
TEST_F(CompletionServer, LogprobsDescribeEachGeneratedToken) {
  const std::vector<int32_t> prompt = tokenizer_->encode("Once upon", tokenizer_->vocab().add_bos, false);
  const std::vector<int32_t> ids = greedy_ids(prompt, 6);
  ASSERT_EQ(ids.size(), 6u) << "an end token came first: pick another prompt";
  const std::string body = R"({"prompt":"Once upon","max_tokens":6,"temperature":0,"logprobs":3)";
  const Reply r = request(port(), "POST", "/v1/completions", body + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  const json choice = json::parse(r.body)["choices"][0];
  const json& lp = choice["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 6u);
  size_t offset = 0;
  for (size_t k = 0; k < 6; ++k) {
    const std::string piece = tokenizer_->token_to_piece(ids[k]);
    EXPECT_EQ(lp["tokens"][k], as_json_text(piece));
    EXPECT_EQ(lp["text_offset"][k].get<size_t>(), offset);
    offset += piece.size();
    const json& top = lp["top_logprobs"][k];
    EXPECT_LE(top.size(), 3u);
    double best = -1e30;
    for (const auto& [p, v] : top.items()) best = std::max(best, v.get<double>());
    EXPECT_DOUBLE_EQ(lp["token_logprobs"][k].get<double>(), best) << "greedy takes the likeliest";
  }
  // Each token's log-probability is the model's at its position.
  std::vector<int32_t> seq = prompt;
  seq.insert(seq.end(), ids.begin(), ids.end());
  for (size_t k = 0; k < 6; ++k) {
    const std::vector<double> want = log_softmax_at(*model_, *pool_, seq, prompt.size() - 1 + k);
    EXPECT_NEAR(lp["token_logprobs"][k].get<double>(), want[static_cast<size_t>(ids[k])], 1e-4) << "token " << k;
  }

  const Reply st = request(port(), "POST", "/v1/completions", body + R"(,"stream":true})");
  ASSERT_EQ(st.status, 200);
  json tokens = json::array(), values = json::array();
  for (size_t p = 0; (p = st.body.find("data: {", p)) != std::string::npos; ++p) {
    const json j = json::parse(st.body.substr(p + 6, st.body.find("\n\n", p) - p - 6));
    if (j["choices"].empty() || j["choices"][0]["logprobs"].is_null()) continue;
    for (const json& t : j["choices"][0]["logprobs"]["tokens"]) tokens.push_back(t);
    for (const json& t : j["choices"][0]["logprobs"]["token_logprobs"]) values.push_back(t);
  }
  EXPECT_EQ(tokens, lp["tokens"]);
  // The streamed request finds the prompt in its slot's cache and evaluates
  // only its last token, alone, where the first took the prompt as one block
  // (Decoder::attention_in_blocks): the same values to float rounding.
  ASSERT_EQ(values.size(), lp["token_logprobs"].size());
  for (size_t k = 0; k < values.size(); ++k)
    EXPECT_NEAR(values[k].get<double>(), lp["token_logprobs"][k].get<double>(), 1e-5) << "token " << k;

  // Chat: an entry per token, with its bytes and its alternatives.
  const std::vector<int32_t> chat_prompt =
      tokenizer_->encode(service_->render_chat({{"user", "Hi"}}), tokenizer_->vocab().add_bos, true);
  const std::vector<int32_t> chat_ids = greedy_ids(chat_prompt, 5);
  const Reply c = request(port(), "POST", "/v1/chat/completions",
                          R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":5,"temperature":0,"logprobs":true,"top_logprobs":2})");
  ASSERT_EQ(c.status, 200) << c.body;
  const json content = json::parse(c.body)["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), chat_ids.size());
  for (size_t k = 0; k < content.size(); ++k) {
    const json& e = content[k];
    const std::string piece = tokenizer_->token_to_piece(chat_ids[k]);
    EXPECT_EQ(e["token"], as_json_text(piece));
    json bytes = json::array();
    for (const unsigned char ch : piece) bytes.push_back(ch);
    EXPECT_EQ(e["bytes"], bytes);
    ASSERT_EQ(e["top_logprobs"].size(), 2u);
    EXPECT_EQ(e["top_logprobs"][0]["logprob"], e["logprob"]);
    EXPECT_GE(e["top_logprobs"][0]["logprob"].get<double>(), e["top_logprobs"][1]["logprob"].get<double>());
  }
  const Reply none = request(port(), "POST", "/v1/completions", R"({"prompt":"a","max_tokens":2})");
  EXPECT_TRUE(json::parse(none.body)["choices"][0]["logprobs"].is_null());
}

// echo with logprobs and no new tokens scores a text (what evaluation
// harnesses ask for): each prompt token's log-probability given the ones
// before it. Prompts may be token ids, and several prompts give a choice each.
TEST_F(CompletionServer, EchoScoresThePromptsTokens) {
  const std::vector<int32_t> ids = tokenizer_->encode("The cat sat on the mat", false, false);
  ASSERT_GE(ids.size(), 4u);
  const json req = {{"prompt", ids}, {"max_tokens", 0}, {"echo", true}, {"logprobs", 1}};
  const Reply r = request(port(), "POST", "/v1/completions", req.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json choice = json::parse(r.body)["choices"][0];
  const json& lp = choice["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), ids.size());
  EXPECT_TRUE(lp["token_logprobs"][0].is_null()) << "nothing predicts the first token";
  std::string spelled;
  for (size_t i = 0; i < ids.size(); ++i) {
    spelled += tokenizer_->token_to_piece(ids[i]);
    if (i == 0) continue;
    const std::vector<double> want = log_softmax_at(*model_, *pool_, ids, i - 1);
    EXPECT_NEAR(lp["token_logprobs"][i].get<double>(), want[static_cast<size_t>(ids[i])], 1e-4) << "token " << i;
  }
  EXPECT_EQ(choice["text"].get<std::string>(), spelled);
  EXPECT_EQ(json::parse(r.body)["usage"]["completion_tokens"], 0);

  // A text prompt: the BOS the server adds is not echoed, and scores the first token.
  const Reply t = request(port(), "POST", "/v1/completions", R"({"prompt":"The cat","max_tokens":0,"echo":true,"logprobs":0})");
  ASSERT_EQ(t.status, 200) << t.body;
  const json tl = json::parse(t.body)["choices"][0]["logprobs"];
  if (tokenizer_->vocab().add_bos && tokenizer_->vocab().bos >= 0) {
    EXPECT_FALSE(tl["token_logprobs"][0].is_null());
    EXPECT_EQ(tl["top_logprobs"][0].size(), 0u);
  }

  // Two prompts, two choices, each as alone.
  const std::vector<int32_t> other = tokenizer_->encode("Zebra crossing", false, false);
  const json both = {{"prompt", {ids, other}}, {"max_tokens", 2}, {"echo", true}, {"logprobs", 1}, {"temperature", 0}};
  const Reply b = request(port(), "POST", "/v1/completions", both.dump());
  ASSERT_EQ(b.status, 200) << b.body;
  const json bj = json::parse(b.body);
  ASSERT_EQ(bj["choices"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const json one = {{"prompt", i == 0 ? ids : other}, {"max_tokens", 2}, {"echo", true}, {"logprobs", 1}, {"temperature", 0}};
    const json alone = json::parse(request(port(), "POST", "/v1/completions", one.dump()).body)["choices"][0];
    EXPECT_EQ(bj["choices"][i]["index"], i);
    EXPECT_EQ(bj["choices"][i]["text"], alone["text"]);
    EXPECT_EQ(bj["choices"][i]["logprobs"]["tokens"], alone["logprobs"]["tokens"]);
    const json& x = bj["choices"][i]["logprobs"]["token_logprobs"];
    const json& y = alone["logprobs"]["token_logprobs"];
    ASSERT_EQ(x.size(), y.size());
    for (size_t k = 1; k < x.size(); ++k) EXPECT_NEAR(x[k].get<double>(), y[k].get<double>(), 1e-4);
  }
  EXPECT_EQ(bj["usage"]["prompt_tokens"], ids.size() + other.size());
}

// llama-server's /tokenize and /detokenize: the tokenizer's ids and text.
TEST_F(CompletionServer, TokenizeAndDetokenize) {
  const std::string text = "Once upon a time";
  const Reply t = request(port(), "POST", "/tokenize", json{{"content", text}}.dump());
  ASSERT_EQ(t.status, 200) << t.body;
  const std::vector<int32_t> ids = tokenizer_->encode(text, false, true);
  EXPECT_EQ(json::parse(t.body)["tokens"], json(ids));
  const Reply p = request(port(), "POST", "/tokenize", json{{"content", text}, {"with_pieces", true}, {"add_special", true}}.dump());
  const json pieces = json::parse(p.body)["tokens"];
  std::string spelled;
  for (const json& e : pieces) spelled += e["piece"].get<std::string>();
  EXPECT_EQ(pieces.size(), tokenizer_->encode(text, tokenizer_->vocab().add_bos, true).size());
  const Reply d = request(port(), "POST", "/detokenize", json{{"tokens", ids}}.dump());
  ASSERT_EQ(d.status, 200) << d.body;
  std::string want;
  for (const int32_t id : ids) want += tokenizer_->token_to_piece(id);
  EXPECT_EQ(json::parse(d.body)["content"], want);
  EXPECT_NE(want.find("upon a time"), std::string::npos);
}

// presence and frequency penalties reach the sampler: greedy text changes
// when the repeated tokens are pushed down hard.
TEST_F(CompletionServer, PenaltiesChangeTheText) {
  const std::string base = R"({"prompt":"Once upon","max_tokens":24,"temperature":0)";
  const std::string plain = json::parse(request(port(), "POST", "/v1/completions", base + "}").body)["choices"][0]["text"];
  const std::string pushed =
      json::parse(request(port(), "POST", "/v1/completions", base + R"(,"frequency_penalty":2,"presence_penalty":2})").body)["choices"][0]["text"];
  EXPECT_NE(plain, pushed);
}

// Seeded fuzzing of request bodies: thousands of valid requests with a field
// set to a value of another type or size, or with their bytes damaged. Each
// is parsed or refused with lowbit::Error (a 400 naming the field), never
// another exception; what is accepted keeps the limits, and every 16th
// accepted one is run to the end (max_tokens cut to 4) with its reply
// written to /dev/null.
TEST_F(CompletionServer, DamagedRequestBodiesAreParsedOrRefused) {
  const std::vector<json> seeds = {
      json::parse(R"({"prompt":"Once upon","max_tokens":3,"temperature":0.5,"top_k":5,"top_p":0.9,"min_p":0.1,
                      "stop":["x"],"logprobs":2,"echo":true,"seed":7,"presence_penalty":0.5,"frequency_penalty":0.2})"),
      json::parse(R"({"prompt":[[5,6,7],"ab"],"max_tokens":2,"logprobs":0,"repeat_penalty":1.1,"repeat_last_n":-1})"),
      json::parse(R"({"prompt":"a","stream":true,"stream_options":{"include_usage":true},"n":1})"),
  };
  const std::vector<json> chat_seeds = {
      json::parse(R"({"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],
                      "max_completion_tokens":3,"logprobs":true,"top_logprobs":3,"stream":false})"),
  };
  const std::vector<json> values = {nullptr, true, false, 0, 1, -1, 20, 21, 1.5, -1e300, 1e300,
                                    int64_t{INT64_MIN}, uint64_t{UINT64_MAX}, "", "x", std::string(300, 'q'),
                                    json::array(), json::array({1, 2}), json::array({"a", 3}), json::object(),
                                    json::array({json::array({1}), json::array()}), json::array({uint64_t{UINT64_MAX}})};
  Rng rng(1124);
  const int devnull = ::open("/dev/null", O_WRONLY);
  ASSERT_GE(devnull, 0);
  int accepted = 0, refused = 0, ran = 0;
  for (int i = 0; i < 3000; ++i) {
    const bool chat = rng.below(4) == 0;
    json j = chat ? chat_seeds[rng.below(chat_seeds.size())] : seeds[rng.below(seeds.size())];
    std::string body;
    if (rng.below(4) == 0) {  // damage the bytes
      body = j.dump();
      for (uint64_t m = 1 + rng.below(3); m > 0; --m) body[rng.below(body.size())] = static_cast<char>(rng.next_u32());
    } else {  // a field (or a message's) set to another value, or removed
      json* target = &j;
      if (chat && rng.below(2) == 0) target = &j["messages"][rng.below(j["messages"].size())];
      std::vector<std::string> keys;
      for (const auto& [k, v] : target->items()) keys.push_back(k);
      const std::string key = keys[rng.below(keys.size())];
      if (rng.below(6) == 0)
        target->erase(key);
      else
        (*target)[key] = values[rng.below(values.size())];
      body = j.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    CompletionRequest r;
    try {
      r = service_->parse(body, chat);
    } catch (const Error& e) {
      ++refused;
      ASSERT_NE(std::string(e.what()), "") << body;
      continue;
    } catch (const std::exception& e) {
      FAIL() << "case " << i << " threw a non-lowbit exception: " << e.what() << "\n" << body;
    }
    ++accepted;
    ASSERT_FALSE(r.prompts.empty()) << body;
    for (const auto& p : r.prompts) {
      ASSERT_FALSE(p.tokens.empty()) << body;
      ASSERT_LT(static_cast<int64_t>(p.tokens.size()), model_->n_ctx()) << body;
    }
    ASSERT_LE(r.logprobs, 20) << body;
    ASSERT_LE(r.max_tokens, model_->n_ctx()) << body;
    if (accepted % 16 != 0) continue;
    json run = json::parse(body);
    run[chat ? "max_completion_tokens" : "max_tokens"] = std::min<int64_t>(r.max_tokens < 0 ? 4 : r.max_tokens, 4);
    HttpRequest req{"POST", chat ? "/v1/chat/completions" : "/v1/completions", {}, run.dump()};
    HttpResponder out(devnull);
    ASSERT_NO_THROW(service_->handle(req, out)) << body;
    ++ran;
  }
  ::close(devnull);
  EXPECT_GT(accepted, 300);
  EXPECT_GT(refused, 300);
  EXPECT_GT(ran, 20);
}

// n choices of one prompt, sampled side by side: choice j is what one request
// with seed + j gives.
TEST_F(CompletionServer, NChoicesAreSeededOneAfterAnother) {
  const json req = {{"prompt", "Once upon"}, {"max_tokens", 8}, {"temperature", 1.0}, {"seed", 5}, {"n", 3}};
  const Reply r = request(port(), "POST", "/v1/completions", req.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  ASSERT_EQ(j["choices"].size(), 3u);
  std::set<std::string> texts;
  for (size_t k = 0; k < 3; ++k) {
    json one = req;
    one["n"] = 1;
    one["seed"] = 5 + k;
    const json alone = json::parse(request(port(), "POST", "/v1/completions", one.dump()).body);
    EXPECT_EQ(j["choices"][k]["index"], k);
    EXPECT_EQ(j["choices"][k]["text"], alone["choices"][0]["text"]) << "choice " << k;
    texts.insert(j["choices"][k]["text"].get<std::string>());
    if (k == 0) {
      EXPECT_EQ(j["usage"]["prompt_tokens"], alone["usage"]["prompt_tokens"]) << "the prompt counts once";
    }
  }
  EXPECT_GT(texts.size(), 1u) << "three seeds, one text";
  EXPECT_EQ(j["usage"]["completion_tokens"], 24);
}

// More requests than slots, some streamed: they generate side by side (three
// at a time) and each gets the text it gets alone.
TEST_F(CompletionServer, ConcurrentRequestsEachGetTheirAnswer) {
  const std::vector<std::string> prompts = {"Once upon", "Zebra", "The cat sat", "Once upon", "A"};
  std::vector<Reply> replies(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i)
    clients.emplace_back([&, i] {
      const json req = {{"prompt", prompts[i]}, {"max_tokens", 8}, {"temperature", 0}, {"stream", i % 2 == 1}};
      replies[i] = request(port(), "POST", "/v1/completions", req.dump());
    });
  for (auto& t : clients) t.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_EQ(replies[i].status, 200) << replies[i].body;
    bool done = true;
    std::string finish;
    const std::string text = i % 2 == 1 ? stream_text(replies[i].body, false, &done, &finish)
                                        : json::parse(replies[i].body)["choices"][0]["text"].get<std::string>();
    EXPECT_TRUE(done);
    EXPECT_EQ(text, json::parse(json(greedy_text(prompts[i], 8)).dump(-1, ' ', false, json::error_handler_t::replace)))
        << prompts[i];
  }
}

// A chat's next turn resends the conversation: the KV cache of the part the
// decoder already holds is kept, and the text is what a fresh decoder gives.
TEST_F(CompletionServer, NextTurnReusesTheCachedPrefix) {
  const Reply first = request(port(), "POST", "/v1/completions", R"({"prompt":"Once upon","max_tokens":6,"temperature":0})");
  ASSERT_EQ(first.status, 200);
  const std::string prompt = "Once upon" + json::parse(first.body)["choices"][0]["text"].get<std::string>() + " then";
  const json req = {{"prompt", prompt}, {"max_tokens", 10}, {"temperature", 0}};
  const Reply next = request(port(), "POST", "/v1/completions", req.dump());
  ASSERT_EQ(next.status, 200);
  const json j = json::parse(next.body);
  const int cached = j["usage"]["prompt_tokens_details"]["cached_tokens"];
  EXPECT_GT(cached, 1) << "the first request's prompt at least";
  EXPECT_LT(cached, j["usage"]["prompt_tokens"].get<int>());
  EXPECT_EQ(j["choices"][0]["text"],
            json::parse(json(greedy_text(prompt, 10)).dump(-1, ' ', false, json::error_handler_t::replace)));
  // A prompt no earlier test sent shares nothing with any slot (beyond BOS)
  // and still gives the fresh text.
  const Reply other = request(port(), "POST", "/v1/completions", R"({"prompt":"Quokka","max_tokens":5,"temperature":0})");
  EXPECT_LE(json::parse(other.body)["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 1);
  EXPECT_EQ(json::parse(other.body)["choices"][0]["text"],
            json::parse(json(greedy_text("Quokka", 5)).dump(-1, ' ', false, json::error_handler_t::replace)));
}

// A client that leaves mid-stream: generation stops, the next request is served.
TEST_F(CompletionServer, ClientLeavingMidStreamDoesNotStopTheServer) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string body = R"({"prompt":"Once upon","max_tokens":200,"stream":true})";
  const std::string req = "POST /v1/completions HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  char buf[256];
  ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);  // the stream has begun
  ::close(fd);
  const Reply r = request(port(), "POST", "/v1/completions", R"({"prompt":"a","max_tokens":2,"temperature":0})");
  EXPECT_EQ(r.status, 200);
}

}  // namespace
}  // namespace lowbit
