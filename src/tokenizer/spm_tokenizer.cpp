#include "tokenizer/spm_tokenizer.h"

#include <cstdio>
#include <queue>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace lowbit {
namespace {

// <0xAB> -> 0xAB; -1 when the text is not of that form.
int parse_byte_token(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  int value = 0;
  for (char c : text.substr(3, 2)) {
    value <<= 4;
    if (c >= '0' && c <= '9')
      value |= c - '0';
    else if (c >= 'A' && c <= 'F')
      value |= c - 'A' + 10;
    else if (c >= 'a' && c <= 'f')
      value |= c - 'a' + 10;
    else
      return -1;
  }
  return value;
}

struct SpmSymbol {
  uint32_t start;  // byte offset in the escaped text
  uint32_t size;   // 0 once merged into its left neighbour
  int32_t prev;
  int32_t next;
};

struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  uint32_t size;  // of the merged text, to spot bigrams made stale by other merges
};

// Highest score first; among equal scores the leftmost.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

SpmTokenizer::SpmTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)), index_(vocab_) {
  byte_tokens_.fill(-1);
  for (int32_t id = 0; id < vocab_.n_vocab(); ++id) {
    const int byte = parse_byte_token(vocab_.tokens[id]);
    if (byte >= 0 && byte_tokens_[byte] < 0) byte_tokens_[byte] = id;
  }
}

void SpmTokenizer::encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const {
  std::string escaped;  // the text with spaces as U+2581
  escaped.reserve(text.size() + 16);
  if (vocab_.add_space_prefix && after_special) escaped += kSpmSpace;
  for (char c : text) {
    if (c == ' ')
      escaped += kSpmSpace;
    else
      escaped += c;
  }
  if (escaped.size() > UINT32_MAX / 2) fail("text of ", text.size(), " bytes is too long to tokenize in one piece");

  std::vector<SpmSymbol> symbols;
  for (size_t pos = 0; pos < escaped.size();) {
    const auto size = static_cast<uint32_t>(utf8_char_length_at(escaped, pos));
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({static_cast<uint32_t>(pos), size, index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
    pos += size;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add_bigram = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t size = symbols[left].size + symbols[right].size;
    const int32_t id = index_.find(std::string_view(escaped).substr(symbols[left].start, size));
    if (id < 0) return;
    queue.push({vocab_.scores[id], left, right, size});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add_bigram(i - 1, i);

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    SpmSymbol& left = symbols[bigram.left];
    SpmSymbol& right = symbols[bigram.right];
    if (left.size == 0 || right.size == 0 || left.size + right.size != bigram.size) continue;
    left.size += right.size;
    right.size = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add_bigram(left.prev, bigram.left);
    try_add_bigram(bigram.left, left.next);
  }

  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next)
    append_symbol(std::string_view(escaped).substr(symbols[i].start, symbols[i].size), out);
}

void SpmTokenizer::append_symbol(std::string_view symbol, std::vector<int32_t>& out) const {
  const int32_t id = index_.find(symbol);
  if (id >= 0) {
    out.push_back(id);
    return;
  }
  for (char c : symbol) {
    const int32_t byte_id = byte_tokens_[static_cast<uint8_t>(c)];
    if (byte_id >= 0) {
      out.push_back(byte_id);
    } else if (vocab_.unk >= 0) {
      out.push_back(vocab_.unk);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(c)));
      fail(vocab_.source, ": byte ", hex, " has no token (no <0x..> byte token and no unknown token)");
    }
  }
}

std::string SpmTokenizer::piece_of(int32_t id) const {
  const std::string& text = vocab_.tokens[id];
  const int32_t type = vocab_.token_types[id];
  if (type == kTokenByte) {
    const int byte = parse_byte_token(text);
    if (byte >= 0) return std::string(1, static_cast<char>(byte));
  }
  if (type == kTokenControl || type == kTokenUnknown) return text;
  std::string piece;
  piece.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    if (text.compare(pos, kSpmSpace.size(), kSpmSpace) == 0) {
      piece += ' ';
      pos += kSpmSpace.size();
    } else {
      piece += text[pos++];
    }
  }
  return piece;
}

}  // namespace lowbit
