#include "tokenizer/vocab_gguf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "core/timer.h"
#include "tokenizer/synthetic_vocab.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_fixtures.h"

namespace lowbit {
namespace {

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "lowbit_tokenizer_" + name + ".gguf"; }

void expect_same_vocab(const Vocab& a, const Vocab& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.scores, b.scores);
  EXPECT_EQ(a.token_types, b.token_types);
  EXPECT_EQ(a.merges, b.merges);
  EXPECT_EQ(a.pre, b.pre);
  EXPECT_EQ(a.bos, b.bos);
  EXPECT_EQ(a.eos, b.eos);
  EXPECT_EQ(a.eot, b.eot);
  EXPECT_EQ(a.unk, b.unk);
  EXPECT_EQ(a.pad, b.pad);
  EXPECT_EQ(a.add_bos, b.add_bos);
  EXPECT_EQ(a.add_space_prefix, b.add_space_prefix);
}

Vocab write_and_read(const Vocab& vocab, const std::string& name) {
  GgufWriter writer;
  writer.set_string("general.architecture", "llama");
  write_vocab_gguf(vocab, writer);
  const std::string path = temp_path(name);
  writer.write(path);
  GgufFile file(path);
  Vocab read = read_vocab_gguf(file);
  std::remove(path.c_str());
  return read;
}

TEST(VocabGguf, RoundTripsBitnet2bSizedSyntheticBpe) {
  Vocab vocab = make_synthetic_bpe_vocab(128256, 256, 280147, 7);
  vocab.pad = 128001;
  GgufWriter writer;
  write_vocab_gguf(vocab, writer);
  const std::string path = temp_path("bpe");
  writer.write(path);
  const double start = now_seconds();
  GgufFile file(path);
  const Vocab read = read_vocab_gguf(file);
  const auto tokenizer = Tokenizer::create(read);
  std::printf("open + read + create a 128256-token, 280147-merge GGUF vocabulary: %.3f s\n", now_seconds() - start);
  std::remove(path.c_str());
  expect_same_vocab(read, vocab);
  EXPECT_EQ(tokenizer->encode("<|eot_id|>", false, true), (std::vector<int32_t>{128009}));
}

TEST(VocabGguf, RoundTripsSyntheticSpmAndTheLlama2Vocab) {
  const Vocab spm = make_synthetic_spm_vocab(1000, 3);
  expect_same_vocab(write_and_read(spm, "spm"), spm);
  GgufFile llama(testing::fixture_path("vocab/ggml-vocab-llama-spm.gguf"));
  const Vocab llama_vocab = read_vocab_gguf(llama);
  expect_same_vocab(write_and_read(llama_vocab, "llama"), llama_vocab);
}

TEST(VocabGguf, FindsEotByNameWhenTheFileDoesNotSay) {
  Vocab vocab = make_synthetic_bpe_vocab(1000, 16, 900, 1);
  const int32_t eot = vocab.eot;
  ASSERT_GE(eot, 0);
  vocab.eot = -1;  // no eot_token_id key
  EXPECT_EQ(write_and_read(vocab, "eot").eot, eot);
}

// A GGUF made by `edit` from a valid vocabulary must fail to read with an error containing `expected`.
void expect_read_error(const std::function<void(GgufWriter&)>& edit, const std::string& expected) {
  GgufWriter writer;
  write_vocab_gguf(make_synthetic_bpe_vocab(600, 4, 400, 2), writer);
  edit(writer);
  const std::string path = temp_path("bad");
  writer.write(path);
  GgufFile file(path);
  try {
    read_vocab_gguf(file);
    ADD_FAILURE() << "no error; expected one mentioning " << expected;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
  }
  std::remove(path.c_str());
}

TEST(VocabGguf, ErrorsNameTheFileAndTheKey) {
  expect_read_error([](GgufWriter& w) { w.set_string("tokenizer.ggml.model", "bert"); }, "\"bert\"");
  expect_read_error([](GgufWriter& w) { w.set_string("tokenizer.ggml.pre", "klingon"); }, "\"klingon\"");
  expect_read_error([](GgufWriter& w) { w.set_u32("tokenizer.ggml.bos_token_id", 600); }, "bos_token_id");
  expect_read_error([](GgufWriter& w) { w.set_f32_array("tokenizer.ggml.scores", {1.0f, 2.0f}); }, "scores");
  expect_read_error([](GgufWriter& w) { w.set_i32_array("tokenizer.ggml.token_type", {1}); }, "token_type");
  std::vector<float> nan_score(600, 0.0f);
  nan_score[7] = NAN;
  expect_read_error([&](GgufWriter& w) { w.set_f32_array("tokenizer.ggml.scores", nan_score); }, "score of token 7 is NaN");
  expect_read_error([](GgufWriter& w) { w.set_i32_array("tokenizer.ggml.tokens", {1}); }, "tokenizer.ggml.tokens");

  GgufWriter no_vocab;
  no_vocab.set_string("general.architecture", "llama");
  const std::string path = temp_path("novocab");
  no_vocab.write(path);
  GgufFile file(path);
  try {
    read_vocab_gguf(file);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.model"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());

  GgufWriter no_tokens;
  no_tokens.set_string("tokenizer.ggml.model", "llama");
  no_tokens.write(path);
  GgufFile file2(path);
  try {
    read_vocab_gguf(file2);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.tokens is missing"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace lowbit
