#include "tokenizer/vocab.h"

#include <cmath>
#include <unordered_map>

#include "core/error.h"

namespace lowbit {

void validate_vocab(const Vocab& vocab, const std::string& source) {
  const size_t n = vocab.tokens.size();
  if (n == 0) fail(source, ": the vocabulary has no tokens");
  if (n > static_cast<size_t>(INT32_MAX)) fail(source, ": ", n, " tokens is more than ids can count");
  if (vocab.token_types.size() != n) fail(source, ": ", vocab.token_types.size(), " token types for ", n, " tokens");
  if (vocab.kind == Vocab::Kind::Spm && vocab.scores.size() != n)
    fail(source, ": ", vocab.scores.size(), " scores for ", n, " tokens (SentencePiece needs one per token)");
  if (vocab.kind == Vocab::Kind::Bpe && !vocab.scores.empty() && vocab.scores.size() != n)
    fail(source, ": ", vocab.scores.size(), " scores for ", n, " tokens");
  // SentencePiece merges the highest-scoring pair first: a NaN score orders
  // nothing, and the same text would tokenize differently by position.
  for (size_t i = 0; i < vocab.scores.size(); ++i)
    if (std::isnan(vocab.scores[i])) fail(source, ": the score of token ", i, " is NaN");
  const std::pair<const char*, int32_t> ids[] = {
      {"bos", vocab.bos}, {"eos", vocab.eos}, {"eot", vocab.eot}, {"unk", vocab.unk}, {"pad", vocab.pad}};
  for (const auto& [name, id] : ids) {
    if (id < -1 || id >= static_cast<int32_t>(n))
      fail(source, ": ", name, " token id ", id, " is outside the vocabulary of ", n, " tokens");
  }
}

std::vector<std::string> llama3_special_token_names(int32_t n_special) {
  static const std::unordered_map<int32_t, const char*> named = {{0, "<|begin_of_text|>"},
                                                                 {1, "<|end_of_text|>"},
                                                                 {6, "<|start_header_id|>"},
                                                                 {7, "<|end_header_id|>"},
                                                                 {9, "<|eot_id|>"}};
  std::vector<std::string> names;
  int32_t reserved = 0;
  for (int32_t i = 0; i < n_special; ++i) {
    auto it = named.find(i);
    names.push_back(it != named.end() ? std::string(it->second) : cat("<|reserved_special_token_", reserved++, "|>"));
  }
  return names;
}

int32_t find_token_by_names(const Vocab& vocab, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
      if (vocab.tokens[id] == name) return static_cast<int32_t>(id);
    }
  }
  return -1;
}

}  // namespace lowbit
