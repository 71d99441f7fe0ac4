#include "tokenizer/synthetic_vocab.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/rng.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace lowbit {
namespace {

constexpr size_t kMaxTokenBytes = 16;

// Bytes drawn with English-like frequencies (and any byte one time in five).
uint8_t common_byte(Rng& rng) {
  static constexpr std::string_view kWeighted =
      "eeeeeetttttaaaaooooiiiinnnnsssshhhrrrdddlllcccuummwwffggyyppbbvkjxqz"
      "      EETAOINSHRDLCUMWFGYPBVK0123456789.,;:'\"-()!?\n";
  if (rng.below(5) == 0) return static_cast<uint8_t>(rng.below(256));
  return static_cast<uint8_t>(kWeighted[rng.below(kWeighted.size())]);
}

struct Split {
  int32_t result;
  int32_t left;
  int32_t right;
  size_t at;  // byte offset of the split in the result
};

}  // namespace

Vocab make_synthetic_bpe_vocab(int32_t n_tokens, int32_t n_special, int32_t n_merges, uint64_t seed) {
  const int64_t n_base = static_cast<int64_t>(n_tokens) - n_special;  // byte + merged tokens
  if (n_special < 0 || n_base < 256)
    fail("synthetic BPE vocabulary: ", n_tokens, " tokens with ", n_special,
         " special leaves fewer than the 256 byte tokens");
  if (n_merges < 0) fail("synthetic BPE vocabulary: ", n_merges, " merges");
  const std::vector<std::string> special_names = llama3_special_token_names(n_special);

  Rng rng(seed);
  std::vector<std::string> raw;  // [n_base] token bytes
  std::unordered_map<std::string, int32_t> id_of;
  std::vector<Split> made_by;  // [n_base - 256] the merge that made each merged token
  raw.reserve(static_cast<size_t>(n_base));
  for (int b = 0; b < 256; ++b) {
    raw.emplace_back(1, static_cast<char>(b));
    id_of.emplace(raw.back(), b);
  }
  // Tokens are the substrings of random words, shortest first, so every part
  // of a token is a token when it is made: a token of m bytes has m - 1 splits
  // into two tokens, one its own merge and the others material for extra merges.
  const int64_t max_words = 4 * n_base + 1000;
  for (int64_t words = 0; static_cast<int64_t>(raw.size()) < n_base; ++words) {
    if (words == max_words) fail("synthetic BPE vocabulary: found only ", raw.size(), " distinct tokens");
    std::string word = rng.below(3) == 0 ? " " : "";
    const size_t length = 2 + rng.below(kMaxTokenBytes - 1);
    while (word.size() < length) word += static_cast<char>(common_byte(rng));
    if (std::any_of(special_names.begin(), special_names.end(),
                    [&](const std::string& name) { return word.find(name) != std::string::npos; }))
      continue;  // a special token's text must not also be a normal token
    for (size_t m = 2; m <= word.size() && static_cast<int64_t>(raw.size()) < n_base; ++m) {
      for (size_t start = 0; start + m <= word.size() && static_cast<int64_t>(raw.size()) < n_base; ++start) {
        std::string text = word.substr(start, m);
        if (id_of.count(text) != 0) continue;
        const size_t at = 1 + rng.below(m - 1);
        const auto id = static_cast<int32_t>(raw.size());
        made_by.push_back({id, id_of.at(text.substr(0, at)), id_of.at(text.substr(at)), at});
        id_of.emplace(text, id);
        raw.push_back(std::move(text));
      }
    }
  }

  // Fewer merges than merged tokens: the last tokens have no merge, like the
  // added tokens of real vocabularies (a word equal to one still finds it
  // under ignore_merges). More: other splits of merged tokens into two tokens;
  // a pair (left, right) makes one text, so these never repeat a merge.
  if (made_by.size() > static_cast<size_t>(n_merges)) made_by.resize(static_cast<size_t>(n_merges));
  std::vector<Split> extra;
  for (const Split& made : made_by) {
    const std::string& text = raw[made.result];
    for (size_t at = 1; at < text.size(); ++at) {
      if (at == made.at) continue;
      auto left = id_of.find(text.substr(0, at));
      auto right = id_of.find(text.substr(at));
      if (left != id_of.end() && right != id_of.end()) extra.push_back({made.result, left->second, right->second, at});
    }
  }
  const size_t n_extra = static_cast<size_t>(n_merges) - made_by.size();
  if (extra.size() < n_extra)
    fail("synthetic BPE vocabulary: ", n_merges, " merges asked for but only ", made_by.size() + extra.size(),
         " exist among ", n_base, " tokens");
  for (size_t i = 0; i < n_extra; ++i) std::swap(extra[i], extra[i + rng.below(extra.size() - i)]);
  extra.resize(n_extra);

  // Merges in the order of the tokens they make, so a merge's parts exist (as
  // ids below it) before it applies; a token's own merge before its extra splits.
  std::vector<Split> merges = made_by;
  merges.insert(merges.end(), extra.begin(), extra.end());
  std::stable_sort(merges.begin(), merges.end(), [](const Split& x, const Split& y) { return x.result < y.result; });

  Vocab vocab;
  vocab.kind = Vocab::Kind::Bpe;
  vocab.source = "synthetic BPE vocabulary";
  vocab.pre = "llama-bpe";
  vocab.add_space_prefix = false;
  for (const std::string& text : raw) {
    vocab.tokens.emplace_back();
    append_byte_level(vocab.tokens.back(), text);
  }
  vocab.token_types.assign(raw.size(), kTokenNormal);
  for (const Split& merge : merges) vocab.merges.push_back(vocab.tokens[merge.left] + " " + vocab.tokens[merge.right]);
  for (const std::string& name : special_names) {
    vocab.tokens.push_back(name);
    vocab.token_types.push_back(kTokenControl);
  }
  const auto special_id = [&](int32_t offset) {
    return offset < n_special ? static_cast<int32_t>(n_base) + offset : -1;
  };
  vocab.bos = special_id(0);
  vocab.eos = special_id(1);
  vocab.eot = special_id(9);
  vocab.add_bos = vocab.bos >= 0;
  validate_vocab(vocab, "synthetic BPE vocabulary");
  return vocab;
}

Vocab make_synthetic_spm_vocab(int32_t n_tokens, uint64_t seed) {
  static const std::vector<std::string> kChars = [] {
    std::vector<std::string> chars{std::string(kSpmSpace)};
    for (char c = 'a'; c <= 'z'; ++c) chars.emplace_back(1, c);
    for (char c = 'A'; c <= 'Z'; ++c) chars.emplace_back(1, c);
    for (char c : std::string_view("0123456789.,;:'\"!?-()\n\t")) chars.emplace_back(1, c);
    for (const char* c :
         {"\xC3\xA9", "\xC3\xBC", "\xC3\x9F", "\xD0\xB6", "\xE4\xB8\xAD", "\xE6\x96\x87", "\xF0\x9F\x99\x82"})
      chars.emplace_back(c);  // é ü ß ж 中 文 🙂
    return chars;
  }();
  constexpr int32_t kFixed = 3 + 256;  // <unk> <s> </s> and the byte tokens
  const int64_t n_pieces = static_cast<int64_t>(n_tokens) - kFixed - static_cast<int64_t>(kChars.size());
  if (n_pieces < 0)
    fail("synthetic SPM vocabulary: ", n_tokens, " tokens is fewer than the ", kFixed + kChars.size(),
         " fixed and single-character tokens");

  Vocab vocab;
  vocab.kind = Vocab::Kind::Spm;
  vocab.source = "synthetic SPM vocabulary";
  vocab.tokens = {"<unk>", "<s>", "</s>"};
  vocab.token_types = {kTokenUnknown, kTokenControl, kTokenControl};
  for (int b = 0; b < 256; ++b) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    vocab.tokens.push_back(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
    vocab.token_types.push_back(kTokenByte);
  }
  vocab.scores.assign(kFixed, 0.0f);

  Rng rng(seed);
  std::vector<std::string> pieces = kChars;  // candidates to build from: characters, then pieces
  std::unordered_set<std::string> seen(kChars.begin(), kChars.end());
  const int64_t max_attempts = 64 * n_pieces + 1000;
  for (int64_t made = 0, attempt = 0; made < n_pieces; ++attempt) {
    if (attempt == max_attempts) fail("synthetic SPM vocabulary: found only ", made, " distinct pieces");
    const std::string& left = pieces[rng.below(pieces.size())];
    const std::string& right = pieces[rng.below(pieces.size())];
    if (right.compare(0, kSpmSpace.size(), kSpmSpace) == 0) continue;  // U+2581 starts words only
    std::string text = left + right;
    if (text.size() > kMaxTokenBytes || !seen.insert(text).second) continue;
    vocab.tokens.push_back(text);
    vocab.token_types.push_back(kTokenNormal);
    vocab.scores.push_back(-static_cast<float>(made));  // earlier pieces merge first
    pieces.push_back(std::move(text));
    ++made;
  }
  // Single characters last and lowest, as SentencePiece lists them.
  for (size_t i = 0; i < kChars.size(); ++i) {
    vocab.tokens.push_back(kChars[i]);
    vocab.token_types.push_back(kTokenNormal);
    vocab.scores.push_back(-static_cast<float>(n_pieces + static_cast<int64_t>(i)));
  }
  vocab.unk = 0;
  vocab.bos = 1;
  vocab.eos = 2;
  validate_vocab(vocab, "synthetic SPM vocabulary");
  return vocab;
}

}  // namespace lowbit
