#include "tokenizer/spm_tokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "formats/gguf.h"
#include "tokenizer/synthetic_vocab.h"
#include "tokenizer/tokenizer_fixtures.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_llama2c.h"

namespace lowbit {
namespace {

using testing::decode;
using testing::fixture_path;

std::unique_ptr<Tokenizer> llama_spm_tokenizer() {
  GgufFile file(fixture_path("vocab/ggml-vocab-llama-spm.gguf"));
  return Tokenizer::create(read_vocab_gguf(file));
}

// Random text mixing ASCII words and spaces, multi-byte characters and (when
// `raw_bytes`) arbitrary bytes, invalid UTF-8 included.
std::string random_text(Rng& rng, size_t n, bool raw_bytes) {
  static const std::vector<std::string> kPieces = {"a",  "e",        "t",        "the",          " ",
                                                   "  ", "\n",       "\t",       "Hello",        "x",
                                                   "7",  "\xC3\xA9", "\xD0\xB6", "\xE4\xB8\xAD", "\xF0\x9F\xA6\x99",
                                                   ".",  "'s"};
  std::string text;
  while (text.size() < n) {
    if (raw_bytes && rng.below(4) == 0) {
      text += static_cast<char>(rng.below(256));
    } else {
      text += kPieces[rng.below(kPieces.size())];
    }
  }
  return text;
}

TEST(SpmTokenizer, MatchesLlamaCppTestVectorsForLlama2Vocab) {
  const auto tokenizer = llama_spm_tokenizer();
  // llama.cpp's test-tokenizer-0 tokenizes with add_special = false, parse_special = true.
  const auto cases = testing::read_vocab_test_vectors(fixture_path("vocab/ggml-vocab-llama-spm.gguf"));
  ASSERT_EQ(cases.size(), 46u);
  for (const auto& c : cases) EXPECT_EQ(tokenizer->encode(c.text, false, true), c.ids) << "text: \"" << c.text << "\"";
}

TEST(SpmTokenizer, ReadsLlama2VocabFromGguf) {
  const auto tokenizer = llama_spm_tokenizer();
  const Vocab& v = tokenizer->vocab();
  EXPECT_EQ(v.kind, Vocab::Kind::Spm);
  EXPECT_EQ(tokenizer->n_vocab(), 32000);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_space_prefix);  // the file has no add_space_prefix key: llama.cpp's default
  EXPECT_TRUE(tokenizer->is_end_of_generation(2));
  EXPECT_FALSE(tokenizer->is_end_of_generation(1));
  EXPECT_EQ(tokenizer->encode("Hello", true, false), (std::vector<int32_t>{1, 15043}));
  EXPECT_EQ(tokenizer->encode("", true, false), (std::vector<int32_t>{1}));
  EXPECT_TRUE(tokenizer->encode("", false, false).empty());
}

TEST(SpmTokenizer, PiecesUnescapeSpacesAndBytes) {
  const auto tokenizer = llama_spm_tokenizer();
  EXPECT_EQ(tokenizer->token_to_piece(15043), " Hello");
  EXPECT_EQ(tokenizer->token_to_piece(13), "\n");  // <0x0A>
  EXPECT_EQ(tokenizer->token_to_piece(3 + 0xF0), "\xF0");
  EXPECT_EQ(tokenizer->token_to_piece(1), "<s>");
  EXPECT_THROW(tokenizer->token_to_piece(32000), Error);
  EXPECT_THROW(tokenizer->token_to_piece(-1), Error);
}

TEST(SpmTokenizer, ParsesControlTokensOnlyWhenAsked) {
  const auto tokenizer = llama_spm_tokenizer();
  const auto parsed = tokenizer->encode("Hi</s>Hi", false, true);
  // A space is prepended at the start and again after a special token.
  const std::vector<int32_t> hi = tokenizer->encode("Hi", false, false);
  std::vector<int32_t> expected = hi;
  expected.push_back(2);
  expected.insert(expected.end(), hi.begin(), hi.end());
  EXPECT_EQ(parsed, expected);
  const auto literal = tokenizer->encode("Hi</s>Hi", false, false);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 2), 0);
  EXPECT_EQ(decode(*tokenizer, literal), " Hi</s>Hi");
}

TEST(SpmTokenizer, DecodesWhatItEncodesUpToThePrefixSpace) {
  const auto tokenizer = llama_spm_tokenizer();
  Rng rng(11);
  for (int i = 0; i < 200; ++i) {
    const std::string text = random_text(rng, 1 + rng.below(60), i % 2 == 1);
    ASSERT_EQ(decode(*tokenizer, tokenizer->encode(text, false, false)), " " + text) << i;
  }
}

// llama2.c's run.c, commit 350e04fe, on the stories260K prompts (fixtures/oracles).
TEST(SpmTokenizer, Tok512MatchesLlama2cRunOracles) {
  const auto tokenizer = Tokenizer::create(read_vocab_llama2c(fixture_path("llama2c/tok512.bin"), 512));
  for (const char* name : {"once_upon_a_time", "lily_and_tom", "empty"}) {
    const auto oracle = nlohmann::json::parse(
        testing::read_whole_file(fixture_path(std::string("oracles/stories260K__") + name + ".json")));
    const std::string prompt = oracle.at("prompt").get<std::string>();
    const auto expected = oracle.at("prompt_ids_with_bos").get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer->encode(prompt, true, false), expected) << name;
  }
}

TEST(SpmTokenizer, Llama2cTokenizerBinMatchesTheGgufVocab) {
  const auto from_bin = Tokenizer::create(read_vocab_llama2c(fixture_path("llama2c/tokenizer.bin"), 32000));
  const auto from_gguf = llama_spm_tokenizer();
  for (int32_t id = 0; id < 32000; ++id) {
    ASSERT_EQ(from_bin->vocab().tokens[id], from_gguf->vocab().tokens[id]) << id;
    ASSERT_EQ(from_bin->vocab().scores[id], from_gguf->vocab().scores[id]) << id;
    ASSERT_EQ(from_bin->vocab().token_types[id], from_gguf->vocab().token_types[id]) << id;
  }
  for (const char* text : {"Once upon a time, there was a little girl named Lily.", "  two spaces\nnew line\t tab",
                           "Ünïcödé – 中文 🦙 and <0x41>", "w048 7tuijk dsdfhu", ""}) {
    EXPECT_EQ(from_bin->encode(text, true, false), from_gguf->encode(text, true, false)) << text;
  }
}

TEST(SpmTokenizer, SyntheticVocabRoundTripsRandomText) {
  const auto tokenizer = Tokenizer::create(make_synthetic_spm_vocab(3000, 5));
  Rng rng(12);
  for (int i = 0; i < 200; ++i) {
    const std::string text = random_text(rng, 1 + rng.below(80), i % 2 == 1);
    const auto ids = tokenizer->encode(text, true, false);
    ASSERT_EQ(ids.front(), 1);
    ASSERT_EQ(decode(*tokenizer, {ids.begin() + 1, ids.end()}), " " + text) << i;
  }
}

TEST(SpmTokenizer, MergesHighestScoreFirstAndLeftmostOnTies) {
  Vocab v;
  v.kind = Vocab::Kind::Spm;
  v.add_space_prefix = false;
  // "ab" and "bc" tie, so the leftmost pair (ab) merges first; "cd" (-2) beats "abc" (-3).
  v.tokens = {"<unk>", "a", "b", "c", "d", "ab", "bc", "abc", "cd"};
  v.scores = {0, -10, -10, -10, -10, -1, -1, -3, -2};
  v.token_types = {kTokenUnknown, 1, 1, 1, 1, 1, 1, 1, 1};
  v.unk = 0;
  const auto tokenizer = Tokenizer::create(v);
  EXPECT_EQ(tokenizer->encode("abc", false, false), (std::vector<int32_t>{7}));      // ab, then ab+c
  EXPECT_EQ(tokenizer->encode("abcd", false, false), (std::vector<int32_t>{5, 8}));  // ab, cd (-2) before abc (-3)
  EXPECT_EQ(tokenizer->encode("bcbc", false, false), (std::vector<int32_t>{6, 6}));
  // No byte tokens: characters outside the vocabulary become unk, one per byte.
  EXPECT_EQ(tokenizer->encode("a\xC3\xA9", false, false), (std::vector<int32_t>{1, 0, 0}));
}

}  // namespace
}  // namespace lowbit
