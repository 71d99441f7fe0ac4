#include "tokenizer/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "core/rng.h"
#include "core/timer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/synthetic_vocab.h"
#include "tokenizer/tokenizer_fixtures.h"
#include "tokenizer/vocab_hf_json.h"

namespace lowbit {
namespace {

using testing::decode;
using testing::fixture_path;

// Loading the 9 MB tokenizer.json once keeps the suite fast.
const Vocab& llama3_vocab() {
  static const Vocab vocab = read_vocab_hf_json(fixture_path("vocab/llama3-tokenizer.json"));
  return vocab;
}

const Tokenizer& llama3() {
  static const std::unique_ptr<Tokenizer> tokenizer = Tokenizer::create(llama3_vocab());
  return *tokenizer;
}

TEST(BpeTokenizer, MatchesLlamaCppTestVectorsForLlama3) {
  // llama.cpp's test-tokenizer-0 tokenizes with add_special = false, parse_special = true.
  const auto cases = testing::read_vocab_test_vectors(fixture_path("vocab/ggml-vocab-llama-bpe.gguf"));
  ASSERT_EQ(cases.size(), 46u);
  for (const auto& c : cases) EXPECT_EQ(llama3().encode(c.text, false, true), c.ids) << "text: \"" << c.text << "\"";
}

TEST(BpeTokenizer, AddsBosAndParsesSpecialTokens) {
  const Tokenizer& t = llama3();
  EXPECT_EQ(t.encode("Hello world", true, false), (std::vector<int32_t>{128000, 9906, 1917}));
  EXPECT_EQ(t.encode("<|start_header_id|>user<|end_header_id|>Hi<|eot_id|>", false, true),
            (std::vector<int32_t>{128006, 882, 128007, 13347, 128009}));
  const auto literal = t.encode("Hi<|eot_id|>", false, false);
  EXPECT_TRUE(std::none_of(literal.begin(), literal.end(), [](int32_t id) { return id >= 128000; }));
  EXPECT_EQ(decode(t, literal), "Hi<|eot_id|>");
  EXPECT_EQ(t.token_to_piece(128009), "<|eot_id|>");
  EXPECT_TRUE(t.is_end_of_generation(128001));
  EXPECT_TRUE(t.is_end_of_generation(128009));
  EXPECT_FALSE(t.is_end_of_generation(128000));
}

TEST(BpeTokenizer, PiecesAreByteLevelDecoded) {
  const Tokenizer& t = llama3();
  EXPECT_EQ(t.token_to_piece(1917), " world");
  EXPECT_EQ(t.token_to_piece(198), "\n");
  EXPECT_EQ(t.token_to_piece(220), " ");
  EXPECT_THROW(t.token_to_piece(128256), Error);
}

TEST(BpeTokenizer, RoundTripsRandomUtf8AndInvalidBytes) {
  const Tokenizer& t = llama3();
  Rng rng(21);
  static const std::vector<std::string> kPieces = {
      "a",      "the",          " ",        "   ",          "\n",
      "\r\n",   "\t",           "Hello",    "'s",           "'LL",
      "123456", "\xC3\xA9",     "\xD0\xB6", "\xE4\xB8\xAD", "\xF0\x9F\xA6\x99",
      "!!",     "\xE2\x80\x8D", "<|",       "|>",           "\xC5\xBF"};
  for (int i = 0; i < 300; ++i) {
    std::string text;
    const size_t n = 1 + rng.below(80);
    while (text.size() < n) {
      if (i % 2 == 1 && rng.below(4) == 0)
        text += static_cast<char>(rng.below(256));
      else
        text += kPieces[rng.below(kPieces.size())];
    }
    ASSERT_EQ(decode(t, t.encode(text, false, true)), text) << i;
  }
}

TEST(BpeTokenizer, EncodesWikiTextQuicklyAndRoundTrips) {
  const Tokenizer& t = llama3();
  const std::string text = testing::read_whole_file(fixture_path("eval/wiki.test.raw"));
  const double start = now_seconds();
  const auto ids = t.encode(text, true, false);
  const double seconds = now_seconds() - start;
  std::printf("wiki.test.raw: %zu bytes -> %zu tokens in %.3f s\n", text.size(), ids.size(), seconds);
  EXPECT_GT(ids.size(), text.size() / 8);
  EXPECT_LT(ids.size(), text.size() / 2);
  EXPECT_EQ(decode(t, {ids.begin() + 1, ids.end()}), text);
}

TEST(BpeTokenizer, EveryPreTokenizerRoundTrips) {
  for (const char* pre : {"default", "gpt-2", "llama3"}) {
    Vocab v = make_synthetic_bpe_vocab(3000, 256, 4000, 22);
    v.pre = pre;
    const auto t = Tokenizer::create(std::move(v));
    const std::string text = "It's 2024: 12345 apples,   3.14 pies\n\n\tand \xF0\x9F\xA6\x99 llamas!! $x+y<=z|w";
    const auto ids = t->encode(text, false, false);
    EXPECT_EQ(decode(*t, ids), text) << pre;
  }
}

TEST(BpeTokenizer, RejectsUnknownPreTokenizerAndBrokenMerges) {
  Vocab v;
  v.kind = Vocab::Kind::Bpe;
  v.pre = "llama-bpe";
  for (int b = 0; b < 256; ++b) v.tokens.push_back(byte_level_char(static_cast<uint8_t>(b)));
  v.token_types.assign(256, kTokenNormal);
  v.tokens.push_back("ab");
  v.token_types.push_back(kTokenNormal);
  v.merges = {"a b"};
  EXPECT_EQ(Tokenizer::create(v)->encode("abab", false, false), (std::vector<int32_t>{256, 256}));

  Vocab unknown_pre = v;
  unknown_pre.pre = "klingon";
  try {
    Tokenizer::create(unknown_pre);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"klingon\""), std::string::npos) << e.what();
  }
  Vocab bad_merge = v;
  bad_merge.merges = {"a c"};  // "ac" is not a token
  EXPECT_THROW(Tokenizer::create(bad_merge), Error);
  bad_merge.merges = {"ab"};  // no space
  EXPECT_THROW(Tokenizer::create(bad_merge), Error);
  Vocab missing_byte = v;
  missing_byte.tokens[10] = "not a byte";
  EXPECT_THROW(Tokenizer::create(missing_byte), Error);
}

}  // namespace
}  // namespace lowbit
