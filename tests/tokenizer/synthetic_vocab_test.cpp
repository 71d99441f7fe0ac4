#include "tokenizer/synthetic_vocab.h"

#include <gtest/gtest.h>

#include <set>
#include <unordered_map>

#include "core/error.h"
#include "core/rng.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_fixtures.h"

namespace lowbit {
namespace {

using testing::decode;

// Independent of the tokenizer: every merge "a b" must join two tokens into a token, once.
void expect_valid_merges(const Vocab& v, int32_t n_special) {
  std::unordered_map<std::string, int32_t> ids;
  for (int32_t id = 0; id < v.n_vocab(); ++id) ASSERT_TRUE(ids.emplace(v.tokens[id], id).second) << "duplicate " << id;
  std::set<std::string> seen;
  for (const std::string& merge : v.merges) {
    const size_t space = merge.find(' ');
    ASSERT_NE(space, std::string::npos) << merge;
    ASSERT_EQ(merge.find(' ', space + 1), std::string::npos) << merge;
    const std::string left = merge.substr(0, space), right = merge.substr(space + 1);
    ASSERT_TRUE(ids.count(left)) << merge;
    ASSERT_TRUE(ids.count(right)) << merge;
    ASSERT_TRUE(ids.count(left + right)) << merge;
    ASSERT_LT(ids[left + right], v.n_vocab() - n_special) << "a merge makes a special token: " << merge;
    ASSERT_TRUE(seen.insert(merge).second) << "merge twice: " << merge;
  }
  for (int b = 0; b < 256; ++b) ASSERT_TRUE(ids.count(byte_level_char(static_cast<uint8_t>(b)))) << b;
}

TEST(SyntheticVocab, BpeHasBitnet2bShapeAndValidMerges) {
  const Vocab v = make_synthetic_bpe_vocab(128256, 256, 280147, 42);
  ASSERT_EQ(v.n_vocab(), 128256);
  ASSERT_EQ(v.merges.size(), 280147u);
  ASSERT_EQ(v.token_types.size(), 128256u);
  EXPECT_TRUE(v.scores.empty());
  expect_valid_merges(v, 256);
  EXPECT_EQ(v.tokens[128000], "<|begin_of_text|>");
  EXPECT_EQ(v.tokens[128001], "<|end_of_text|>");
  EXPECT_EQ(v.tokens[128002], "<|reserved_special_token_0|>");
  EXPECT_EQ(v.tokens[128006], "<|start_header_id|>");
  EXPECT_EQ(v.tokens[128009], "<|eot_id|>");
  EXPECT_EQ(v.tokens[128255], "<|reserved_special_token_250|>");
  EXPECT_EQ(v.token_types[128255], kTokenControl);
  EXPECT_EQ(v.token_types[127999], kTokenNormal);
  EXPECT_EQ(v.bos, 128000);
  EXPECT_EQ(v.eos, 128001);
  EXPECT_EQ(v.eot, 128009);
  EXPECT_EQ(v.pre, "llama-bpe");
  EXPECT_TRUE(v.add_bos);
}

TEST(SyntheticVocab, FewerMergesThanMergedTokensLeavesTheLastWithout) {
  // Falcon3's shape: 131072 tokens but 128000 merges.
  const Vocab v = make_synthetic_bpe_vocab(3000, 256, 1500, 6);
  ASSERT_EQ(v.n_vocab(), 3000);
  ASSERT_EQ(v.merges.size(), 1500u);
  expect_valid_merges(v, 256);
  // Tokens 1756..2743 are made by no merge; under ignore_merges a word equal to one is still that token.
  const auto t = Tokenizer::create(v);
  const PreTokenizer words(*find_pre_tokenizer(v.pre));
  int checked = 0;
  for (int32_t id = 256 + 1500; id < 3000 - 256; ++id) {
    const std::string text = t->token_to_piece(id);
    if (words.split(text).size() != 1) continue;
    EXPECT_EQ(t->encode(text, false, false), std::vector<int32_t>{id});
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

TEST(SyntheticVocab, SameSeedSameVocabOtherSeedOther) {
  const Vocab a = make_synthetic_bpe_vocab(2000, 16, 3000, 9);
  const Vocab b = make_synthetic_bpe_vocab(2000, 16, 3000, 9);
  const Vocab c = make_synthetic_bpe_vocab(2000, 16, 3000, 10);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.merges, b.merges);
  EXPECT_NE(a.tokens, c.tokens);
  expect_valid_merges(a, 16);
}

TEST(SyntheticVocab, BpeRoundTripsRandomUtf8AndBytes) {
  const auto t = Tokenizer::create(make_synthetic_bpe_vocab(5000, 256, 9000, 3));
  Rng rng(4);
  size_t n_tokens = 0, n_bytes = 0;
  for (int i = 0; i < 300; ++i) {
    std::string text;
    const size_t n = rng.below(120);
    while (text.size() < n) {
      switch (rng.below(4)) {
        case 0:
          text += static_cast<char>(rng.below(256));
          break;
        case 1:
          text += " the";
          break;
        case 2:
          text += "\xE4\xB8\xAD\xF0\x9F\xA6\x99";
          break;
        default:
          text += static_cast<char>('a' + rng.below(26));
      }
    }
    const auto ids = t->encode(text, true, false);
    ASSERT_EQ(ids.front(), t->vocab().bos);
    ASSERT_EQ(decode(*t, {ids.begin() + 1, ids.end()}), text) << i;
    n_tokens += ids.size() - 1;
    n_bytes += text.size();
  }
  EXPECT_LT(n_tokens, n_bytes);  // merges do happen
}

TEST(SyntheticVocab, SpmHasLlama2LayoutAndRoundTrips) {
  const Vocab v = make_synthetic_spm_vocab(4000, 8);
  ASSERT_EQ(v.n_vocab(), 4000);
  ASSERT_EQ(v.scores.size(), 4000u);
  EXPECT_EQ(v.tokens[0], "<unk>");
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.tokens[2], "</s>");
  EXPECT_EQ(v.tokens[3], "<0x00>");
  EXPECT_EQ(v.tokens[258], "<0xFF>");
  EXPECT_EQ(v.token_types[258], kTokenByte);
  std::set<std::string> distinct(v.tokens.begin(), v.tokens.end());
  EXPECT_EQ(distinct.size(), v.tokens.size());
  const auto t = Tokenizer::create(v);
  Rng rng(5);
  for (int i = 0; i < 200; ++i) {
    std::string text;
    const size_t n = 1 + rng.below(100);
    while (text.size() < n) text += rng.below(5) == 0 ? std::string(1, static_cast<char>(rng.below(256))) : " the cat";
    EXPECT_EQ(decode(*t, t->encode(text, false, false)), " " + text) << i;
  }
}

TEST(SyntheticVocab, RejectsImpossibleSizes) {
  EXPECT_THROW(make_synthetic_bpe_vocab(300, 50, 100, 1), Error);  // fewer than 256 byte tokens left
  EXPECT_THROW(make_synthetic_bpe_vocab(1000, 0, -1, 1), Error);
  EXPECT_THROW(make_synthetic_bpe_vocab(1000, 0, 100000, 1), Error);  // more merges than splits exist
  EXPECT_THROW(make_synthetic_spm_vocab(100, 1), Error);
}

}  // namespace
}  // namespace lowbit
