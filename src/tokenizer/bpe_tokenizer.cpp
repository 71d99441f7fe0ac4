#include "tokenizer/bpe_tokenizer.h"

#include <queue>

#include "core/error.h"
#include "tokenizer/byte_level.h"

namespace lowbit {
namespace {

const PreTokenizerSpec& find_spec(const Vocab& vocab) {
  const PreTokenizerSpec* spec = find_pre_tokenizer(vocab.pre);
  if (spec == nullptr)
    fail(vocab.source, ": unknown BPE pre-tokenizer \"", vocab.pre,
         "\" (tokenizer.ggml.pre); known: ", known_pre_tokenizer_names());
  return *spec;
}

struct BpeSymbol {
  int32_t id;    // the token this symbol is now
  int32_t prev;  // neighbours in the word, -1 at the ends
  int32_t next;
  bool alive;  // false once merged into its left neighbour
};

struct Candidate {
  int32_t rank;
  int32_t left;  // symbol indices
  int32_t right;
  int32_t left_id;  // the symbols' tokens when proposed, to spot stale candidates
  int32_t right_id;
  int32_t result;
};

// Lowest rank first; among equal ranks the leftmost.
struct CandidateOrder {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

BpeTokenizer::BpeTokenizer(Vocab vocab)
    : Tokenizer(std::move(vocab)),
      spec_(find_spec(vocab_)),
      pre_tokenizer_(spec_),
      index_(vocab_),
      merges_(vocab_.merges.size()) {
  std::string scratch;
  for (int b = 0; b < 256; ++b) {
    byte_tokens_[b] = index_.find(byte_level_char(static_cast<uint8_t>(b)));
    if (byte_tokens_[b] < 0)
      fail(vocab_.source, ": byte ", b, " has no token \"", byte_level_char(static_cast<uint8_t>(b)), "\" in the vocabulary");
  }
  for (size_t rank = 0; rank < vocab_.merges.size(); ++rank) {
    const std::string& merge = vocab_.merges[rank];
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos) fail(vocab_.source, ": merge ", rank, " \"", merge, "\" is not two tokens and a space");
    const std::string_view left(merge.data(), space);
    const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
    scratch.assign(left);
    scratch.append(right);
    const int32_t left_id = index_.find(left);
    const int32_t right_id = index_.find(right);
    const int32_t result = index_.find(scratch);
    if (left_id < 0 || right_id < 0 || result < 0)
      fail(vocab_.source, ": merge ", rank, " \"", merge, "\": \"",
           left_id < 0    ? left
           : right_id < 0 ? right
                          : scratch,
           "\" is not a token");
    merges_.add(left_id, right_id, {static_cast<int32_t>(rank), result});
  }
}

void BpeTokenizer::encode_text(std::string_view text, bool, std::vector<int32_t>& out) const {
  std::string scratch;
  for (std::string_view word : pre_tokenizer_.split(text)) encode_word(word, scratch, out);
}

void BpeTokenizer::encode_word(std::string_view word, std::string& scratch, std::vector<int32_t>& out) const {
  if (word.size() == 1) {
    out.push_back(byte_tokens_[static_cast<uint8_t>(word[0])]);
    return;
  }
  if (spec_.ignore_merges) {
    scratch.clear();
    append_byte_level(scratch, word);
    const int32_t id = index_.find(scratch);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }

  const auto n = static_cast<int32_t>(word.size());
  std::vector<BpeSymbol> symbols(n);
  for (int32_t i = 0; i < n; ++i)
    symbols[i] = {byte_tokens_[static_cast<uint8_t>(word[i])], i - 1, i + 1 < n ? i + 1 : -1, true};

  std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> queue;
  auto propose = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const MergeTable::Merge merge = merges_.find(symbols[left].id, symbols[right].id);
    if (merge.rank >= 0) queue.push({merge.rank, left, right, symbols[left].id, symbols[right].id, merge.result});
  };
  for (int32_t i = 1; i < n; ++i) propose(i - 1, i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    BpeSymbol& left = symbols[c.left];
    BpeSymbol& right = symbols[c.right];
    // A merge only ever grows a symbol, so unchanged ids and adjacency mean the pair is current.
    if (!left.alive || !right.alive || left.next != c.right || left.id != c.left_id || right.id != c.right_id) continue;
    left.id = c.result;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = c.left;
    propose(left.prev, c.left);
    propose(c.left, left.next);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

std::string BpeTokenizer::piece_of(int32_t id) const {
  const int32_t type = vocab_.token_types[id];
  if (type == kTokenControl || type == kTokenUnknown || type == kTokenUserDefined) return vocab_.tokens[id];
  return decode_byte_level(vocab_.tokens[id]);
}

}  // namespace lowbit
