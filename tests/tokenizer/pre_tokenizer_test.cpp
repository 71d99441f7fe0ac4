#include "tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/rng.h"

namespace lowbit {
namespace {

using Words = std::vector<std::string_view>;

Words split_with(std::string_view pre, std::string_view text) {
  const PreTokenizerSpec* spec = find_pre_tokenizer(pre);
  if (spec == nullptr) fail("no pre-tokenizer ", pre);
  return PreTokenizer(*spec).split(text);
}

TEST(PreTokenizer, Llama3SplitsWordsNumbersAndSpaces) {
  EXPECT_EQ(split_with("llama-bpe", "Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(split_with("llama-bpe", "   Hello"), (Words{"  ", " Hello"}));
  EXPECT_EQ(split_with("llama-bpe", "1234567"), (Words{"123", "456", "7"}));
  EXPECT_EQ(split_with("llama-bpe", "I'm HE'LL"), (Words{"I", "'m", " HE", "'LL"}));
  EXPECT_EQ(split_with("llama-bpe", "a\n\n b"), (Words{"a", "\n\n", " b"}));
  EXPECT_EQ(split_with("llama-bpe", "x  \n"), (Words{"x", "  \n"}));
  EXPECT_EQ(split_with("llama-bpe", "(hi)!!\n"), (Words{"(hi", ")!!\n"}));
  EXPECT_EQ(split_with("llama-bpe", "\xD0\xBD\xD0\xB5 \xE4\xB8\xAD"), (Words{"\xD0\xBD\xD0\xB5", " \xE4\xB8\xAD"}));
  // Only ASCII letters after the apostrophe: "'ſ" (long s) is no contraction.
  EXPECT_EQ(split_with("llama-bpe", "a'\xC5\xBF"), (Words{"a", "'\xC5\xBF"}));
  EXPECT_TRUE(split_with("llama-bpe", "").empty());
}

TEST(PreTokenizer, DefaultAppliesItsRegexesInTurn) {
  // Punctuation runs first, then GPT-2's split, then digit runs, then groups of three digits.
  EXPECT_EQ(split_with("default", "Hi, you 12345!"), (Words{"Hi", ",", " you", " ", "123", "45", "!"}));
  EXPECT_EQ(split_with("gpt-2", "Hi, you 12345!"), (Words{"Hi", ",", " you", " 12345", "!"}));
}

TEST(PreTokenizer, AliasesShareOneSpec) {
  EXPECT_EQ(find_pre_tokenizer("llama3"), find_pre_tokenizer("llama-bpe"));
  EXPECT_EQ(find_pre_tokenizer("falcon3"), find_pre_tokenizer("llama-bpe"));
  EXPECT_TRUE(find_pre_tokenizer("llama-bpe")->ignore_merges);
  EXPECT_FALSE(find_pre_tokenizer("gpt-2")->ignore_merges);
  EXPECT_EQ(find_pre_tokenizer("nonsense"), nullptr);
  EXPECT_NE(known_pre_tokenizer_names().find("llama-bpe"), std::string::npos);
}

TEST(PreTokenizer, WordsConcatenateBackToAnyInput) {
  Rng rng(31);
  for (const char* pre : {"default", "gpt-2", "llama-bpe"}) {
    for (int i = 0; i < 200; ++i) {
      std::string text;
      const size_t n = rng.below(64);
      for (size_t j = 0; j < n; ++j)
        text += static_cast<char>(rng.below(4) == 0 ? rng.below(256) : " a1.\n'\xC3\xA9"[rng.below(9)]);
      std::string joined;
      for (std::string_view word : split_with(pre, text)) {
        ASSERT_FALSE(word.empty());
        joined += word;
      }
      ASSERT_EQ(joined, text) << pre << " " << i;
    }
  }
}

TEST(PreTokenizer, LongWhitespaceRunsDoNotOverflowTheMatcher) {
  const std::string spaces(200000, ' ');
  const std::string text = spaces + "x" + spaces;  // outlives the views into it
  const Words words = split_with("llama-bpe", text);
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[0].size(), spaces.size() - 1);
  EXPECT_EQ(words[1], " x");
  EXPECT_EQ(words[2].size(), spaces.size());
}

TEST(RegexSplitter, RejectsABadPatternNamingIt) {
  try {
    RegexSplitter bad("(unclosed");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(unclosed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lowbit
