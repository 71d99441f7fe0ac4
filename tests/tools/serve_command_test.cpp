// `lowbit serve` as a user starts it: it prints where it listens, answers over
// HTTP, and exits 0 on SIGTERM. `lowbit chat`: turns on stdin, replies on
// stdout, each turn reusing the conversation's KV cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "lowbit_cli.h"

namespace lowbit {
namespace {

using testing::Outcome;
using testing::quote;
using testing::run_lowbit;

TEST(ServeCommand, AnswersThenStopsOnSigterm) {
  const std::string model = testing::temp_path("serve-cli-tiny.gguf");
  ASSERT_EQ(run_lowbit("gen-model --shape tiny -o " + quote(model)).exit_code, 0);
  const std::string log = testing::temp_path("serve-cli.log");
  // bash: start the server on any free port, read the port from its first
  // line, ask over /dev/tcp, then SIGTERM it and report its exit status.
  const std::string script =
      std::string(LOWBIT_BINARY) + " serve -t 1 --port 0 -m " + quote(model) + " 2>" + quote(log) + " & pid=$!\n" +
      "for i in $(seq 100); do grep -q 'http://' " + quote(log) + " && break; sleep 0.1; done\n" +
      "port=$(sed -n 's|.*http://[^:]*:\\([0-9]*\\).*|\\1|p' " + quote(log) + ")\n" +
      "exec 3<>/dev/tcp/127.0.0.1/$port\n" +
      "body='{\"prompt\":\"hi\",\"max_tokens\":3,\"temperature\":0}'\n" +
      "printf 'POST /v1/completions HTTP/1.1\\r\\nContent-Length: %d\\r\\n\\r\\n%s' ${#body} \"$body\" >&3\n" +
      "cat <&3\n" +
      "kill -TERM $pid; wait $pid; echo \"exit=$?\"\n";
  FILE* p = popen(("bash -c " + quote(script)).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  EXPECT_NE(out.find("HTTP/1.1 200 OK"), std::string::npos) << out;
  EXPECT_NE(out.find("\"completion_tokens\":3"), std::string::npos) << out;
  EXPECT_NE(out.find("exit=0"), std::string::npos) << out;
  const std::string err = testing::read_text(log);
  EXPECT_NE(err.find("serving serve-cli-tiny on http://127.0.0.1:"), std::string::npos) << err;
  EXPECT_NE(err.find("server stopped"), std::string::npos) << err;
}

TEST(ChatCommand, TwoTurnsTheSecondOnTheFirstsCache) {
  const std::string model = testing::temp_path("chat-cli-tiny.gguf");
  ASSERT_EQ(run_lowbit("gen-model --shape tiny -o " + quote(model)).exit_code, 0);
  const std::string input = testing::temp_path("chat-input.txt");
  {
    FILE* f = std::fopen(input.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("Hello there\nAnd then?\n", f);
    std::fclose(f);
  }
  const Outcome o = run_lowbit("chat -t 1 --temp 0 -n 4 -m " + quote(model) + " < " + quote(input));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // One stderr line per turn: "lowbit: N prompt tokens (M cached), G generated, ...".
  struct Turn {
    long prompt = 0, cached = 0, generated = 0;
  };
  std::vector<Turn> turns;
  for (size_t p = 0; (p = o.err.find("lowbit: ", p)) != std::string::npos; ++p) {
    Turn t;
    if (std::sscanf(o.err.c_str() + p, "lowbit: %ld prompt tokens (%ld cached), %ld", &t.prompt, &t.cached,
                    &t.generated) == 3)
      turns.push_back(t);
  }
  ASSERT_EQ(turns.size(), 2u) << o.err;
  EXPECT_EQ(turns[0].cached, 0) << o.err;
  EXPECT_GT(turns[0].generated, 0) << o.err;
  // The second prompt extends the first prompt and its reply as sampled; all of
  // it is cached, but for the reply's last token when the length limit ended
  // the reply (sampled, never evaluated).
  EXPECT_GE(turns[1].cached, turns[0].prompt + turns[0].generated - 1) << o.err;
  EXPECT_LE(turns[1].cached, turns[0].prompt + turns[0].generated) << o.err;
  EXPECT_GT(turns[1].prompt, turns[0].prompt + turns[0].generated) << o.err;
  EXPECT_GE(std::count(o.out.begin(), o.out.end(), '\n'), 2) << "one reply line per turn: " << o.out;
}

}  // namespace
}  // namespace lowbit
