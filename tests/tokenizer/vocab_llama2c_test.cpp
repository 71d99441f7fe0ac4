#include "tokenizer/vocab_llama2c.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tokenizer/tokenizer_fixtures.h"
#include "tokenizer/utf8.h"

namespace lowbit {
namespace {

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "lowbit_tokenizer_" + name + ".bin";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

void expect_error(const std::string& path, int32_t n_vocab, const std::string& expected) {
  try {
    read_vocab_llama2c(path, n_vocab);
    ADD_FAILURE() << "no error; expected one mentioning " << expected;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
  }
}

TEST(VocabLlama2c, NormalizesPiecesToGgufForm) {
  const Vocab v = read_vocab_llama2c(testing::fixture_path("llama2c/tok512.bin"), 512);
  ASSERT_EQ(v.n_vocab(), 512);
  EXPECT_EQ(v.tokens[0], "<unk>");
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.tokens[2], "</s>");
  EXPECT_EQ(v.tokens[3 + 0x0A], "<0x0A>");
  EXPECT_EQ(v.tokens[259], std::string(kSpmSpace) + "t");  // " t" in the file
  EXPECT_EQ(v.scores[260], -1.0f);
  EXPECT_EQ(v.token_types[0], kTokenUnknown);
  EXPECT_EQ(v.token_types[1], kTokenControl);
  EXPECT_EQ(v.token_types[3 + 0xFF], kTokenByte);
  EXPECT_EQ(v.token_types[259], kTokenNormal);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_space_prefix);
}

TEST(VocabLlama2c, ErrorsNameTheFileAndWhatIsWrong) {
  const std::string good = testing::read_whole_file(testing::fixture_path("llama2c/tok512.bin"));
  expect_error(write_temp("cut_header", good.substr(0, 3)), 512, "no max_token_length");
  expect_error(write_temp("cut_token", good.substr(0, good.size() - 5)), 512, "token 511 of 512");
  expect_error(write_temp("cut_record", good.substr(0, 4 + 6)), 512, "truncated in token 0");
  expect_error(write_temp("extra", good), 511, "bytes follow the 511 tokens");
  std::string negative = good;
  negative[4 + 4 + 3] = static_cast<char>(0x80);  // token 0's length becomes negative
  expect_error(write_temp("negative", negative), 512, "has length -");
  expect_error(write_temp("tiny", good), 2, "too small");
  expect_error(::testing::TempDir() + "lowbit_no_such_tokenizer.bin", 512, "cannot open");
}

}  // namespace
}  // namespace lowbit
