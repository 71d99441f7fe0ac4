#include "tokenizer/vocab_hf_json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/timer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_fixtures.h"

namespace lowbit {
namespace {

TEST(VocabHfJson, ReadsTheLlama3Tokenizer) {
  const double start = now_seconds();
  const Vocab v = read_vocab_hf_json(testing::fixture_path("vocab/llama3-tokenizer.json"));
  const auto tokenizer = Tokenizer::create(v);
  std::printf("read + create from tokenizer.json: %.3f s\n", now_seconds() - start);
  EXPECT_EQ(v.kind, Vocab::Kind::Bpe);
  EXPECT_EQ(v.n_vocab(), 128256);
  EXPECT_EQ(v.merges.size(), 280147u);
  EXPECT_EQ(v.merges[0], "\xC4\xA0 \xC4\xA0");  // "Ġ Ġ"
  EXPECT_EQ(v.tokens[0], "!");
  EXPECT_EQ(v.tokens[128009], "<|eot_id|>");
  EXPECT_EQ(v.token_types[127999], kTokenNormal);
  EXPECT_EQ(v.token_types[128000], kTokenControl);
  EXPECT_EQ(v.pre, "llama-bpe");
  EXPECT_EQ(v.bos, 128000);
  EXPECT_EQ(v.eos, 128001);
  EXPECT_EQ(v.eot, 128009);
  EXPECT_EQ(v.unk, -1);
  EXPECT_TRUE(v.add_bos);
  EXPECT_FALSE(v.add_space_prefix);
  EXPECT_TRUE(v.scores.empty());
}

void expect_error(const std::string& json, const std::string& expected) {
  const std::string path = ::testing::TempDir() + "lowbit_tokenizer_bad.json";
  std::ofstream(path) << json;
  try {
    read_vocab_hf_json(path);
    ADD_FAILURE() << "no error; expected one mentioning " << expected;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
  }
  std::remove(path.c_str());
}

TEST(VocabHfJson, ErrorsNameTheFileAndTheField) {
  const std::string byte_level = R"("pre_tokenizer": {"type": "ByteLevel"})";
  expect_error("{", "");
  expect_error("[]", "not a JSON object");
  expect_error(R"({"model": {"type": "Unigram"}})", "\"Unigram\"");
  expect_error(R"({"model": {"type": "BPE", "merges": []}})", "\"vocab\" is missing");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 2}, "merges": []}, )" + byte_level + "}",
               "\"b\" has id 2, not one of 0..1");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 2}, "merges": []},
                  "added_tokens": [{"id": 0, "content": "a"}], )" +
                   byte_level + "}",
               "no token has id 1");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}, )" + byte_level + "}",
               "id 0 is both");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 2000000000}, "merges": []}, )" + byte_level + "}",
               "2000000000");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": -4}, "merges": []}, )" + byte_level + "}", "-4");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [3]}, )" + byte_level + "}", "merges[0]");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                  "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\w+"}}})",
               "no ByteLevel");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": "\\w+"}}, {"type": "ByteLevel", "use_regex": false}]}})",
               "\\w+");
}

TEST(VocabHfJson, AcceptsMergesAsPairsAndGpt2ByteLevel) {
  const std::string path = ::testing::TempDir() + "lowbit_tokenizer_pairs.json";
  std::string vocab = "{";
  // The 256 byte tokens are not needed to read the file, only to build a tokenizer.
  vocab += R"("a": 0, "b": 1, "ab": 2})";
  std::ofstream(path) << R"({"model": {"type": "BPE", "vocab": )" << vocab
                      << R"(, "merges": [["a", "b"]]}, "added_tokens": [{"id": 3, "content": "<x>", "special": false}],
                            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}})";
  const Vocab v = read_vocab_hf_json(path);
  std::remove(path.c_str());
  EXPECT_EQ(v.merges, (std::vector<std::string>{"a b"}));
  EXPECT_EQ(v.pre, "gpt-2");
  EXPECT_EQ(v.n_vocab(), 4);
  EXPECT_EQ(v.token_types[3], kTokenUserDefined);
  EXPECT_FALSE(v.add_bos);
}

}  // namespace
}  // namespace lowbit
