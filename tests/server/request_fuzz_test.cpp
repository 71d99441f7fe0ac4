// Seeded mutation fuzzing of what a client sends: request heads (the HTTP
// layer) damaged thousands of ways must be accepted with sane fields or
// refused with a 4xx and a reason; never a crash or an exception. (The JSON
// bodies are fuzzed against a loaded model in completion_server_test.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/rng.h"
#include "server/http_server.h"

namespace lowbit {
namespace {

// Pieces that sit on the parser's edges.
const std::vector<std::string> kPieces = {"\r\n", "\r", "\n", ":", " ", "\t", "HTTP/1.1", "HTTP/2", "?",
                                          "Content-Length: ", "99999999999999", "4194305", "-1", "0x10",
                                          "Transfer-Encoding: chunked", std::string(1, '\0'), "\xff\xfe", "::"};

void mutate(std::string& s, Rng& rng) {
  switch (rng.below(6)) {
    case 0:  // flip a bit
      if (!s.empty()) s[rng.below(s.size())] ^= static_cast<char>(1u << rng.below(8));
      break;
    case 1:  // store a random byte
      if (!s.empty()) s[rng.below(s.size())] = static_cast<char>(rng.next_u32());
      break;
    case 2:  // truncate
      s.resize(rng.below(s.size() + 1));
      break;
    case 3:  // insert an edge piece
      s.insert(rng.below(s.size() + 1), kPieces[rng.below(kPieces.size())]);
      break;
    case 4:  // remove a few bytes
      if (!s.empty()) {
        const size_t at = rng.below(s.size());
        s.erase(at, 1 + rng.below(8));
      }
      break;
    default:  // repeat a stretch (long lines, many headers)
      if (!s.empty()) {
        const size_t at = rng.below(s.size()), n = 1 + rng.below(std::min<size_t>(64, s.size() - at));
        const std::string stretch = s.substr(at, n);
        for (uint64_t k = rng.below(400); k > 0; --k) s.insert(at, stretch);
      }
  }
}

TEST(HttpHeadFuzz, EveryDamagedHeadIsParsedOrRefusedWithAReason) {
  const std::vector<std::string> seeds = {
      "POST /v1/completions HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/json\r\nContent-Length: 42",
      "GET /health?x=1 HTTP/1.1\r\nHost: x",
      "POST /tokenize HTTP/1.0\r\nContent-Length: 0\r\nX-Empty:\r\nAccept: */*",
  };
  Rng rng(20261124);
  int accepted = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string head = seeds[rng.below(seeds.size())];
    for (uint64_t m = 1 + rng.below(4); m > 0; --m) mutate(head, rng);
    HttpRequest req;
    HttpHead verdict;
    ASSERT_NO_THROW(verdict = parse_http_head(head, req)) << "case " << i;
    if (verdict.status == 0) {
      ++accepted;
      ASSERT_FALSE(req.method.empty()) << "case " << i;
      ASSERT_LE(verdict.content_length, HttpServer::kMaxBodyBytes) << "case " << i;
      for (const auto& [name, value] : req.headers) ASSERT_FALSE(name.empty()) << "case " << i;
    } else {
      ++refused;
      ASSERT_TRUE(verdict.status == 400 || verdict.status == 411 || verdict.status == 413 || verdict.status == 431)
          << "case " << i << ": " << verdict.status;
      ASSERT_FALSE(verdict.why.empty()) << "case " << i;
    }
  }
  // Both sides were reached, or the mutations were too weak or too strong.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 1000);
}

TEST(HttpHead, FieldsOfAGoodHeadAndTheLimits) {
  HttpRequest req;
  HttpHead h = parse_http_head("POST /v1/completions?stream=1 HTTP/1.1\r\nHost: x\r\nCONTENT-LENGTH:  12 \r\nX-A: b:c", req);
  EXPECT_EQ(h.status, 0);
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.path, "/v1/completions");
  EXPECT_EQ(h.content_length, 12u);
  EXPECT_EQ(req.headers["x-a"], "b:c");
  EXPECT_EQ(parse_http_head("GET /x HTTP/1.1\r\nContent-Length: 4194305", req).status, 413);
  EXPECT_EQ(parse_http_head("GET /x HTTP/1.1\r\nContent-Length: 4194304", req).status, 0);
  EXPECT_EQ(parse_http_head("GET /x HTTP/1.1\r\nContent-Length: -4", req).status, 400);
  EXPECT_EQ(parse_http_head(" /x HTTP/1.1", req).status, 400) << "no method";
  EXPECT_EQ(parse_http_head("GET /x HTTP/1.1\r\n: v", req).status, 400) << "no header name";
  EXPECT_EQ(parse_http_head("GET /x HTTP/1.1\r\nX: " + std::string(20000, 'a'), req).status, 431);
}

}  // namespace
}  // namespace lowbit
