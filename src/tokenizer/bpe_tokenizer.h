// Byte-level BPE (GPT-2, Llama 3) with llama.cpp's semantics: the text is split
// into words by the pre-tokenizer regexes, each word is written in GPT-2's
// byte alphabet, starts as one symbol per byte, and the adjacent pair with the
// lowest merge rank is merged (ties: leftmost) until no pair has a merge. With
// ignore_merges (Llama 3) a word that is itself a token is emitted whole.
#pragma once

#include <array>

#include "tokenizer/merge_table.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/token_index.h"
#include "tokenizer/tokenizer.h"

namespace lowbit {

class BpeTokenizer final : public Tokenizer {
 public:
  // Error when the pre-tokenizer is unknown, a byte has no token, or a merge
  // is not two tokens whose concatenation is a token.
  explicit BpeTokenizer(Vocab vocab);

 private:
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;
  std::string piece_of(int32_t id) const override;
  void encode_word(std::string_view word, std::string& scratch, std::vector<int32_t>& out) const;

  const PreTokenizerSpec& spec_;
  PreTokenizer pre_tokenizer_;
  TokenIndex index_;                      // byte-level text -> id
  std::array<int32_t, 256> byte_tokens_;  // token of each single byte
  MergeTable merges_;                     // rank = index in Vocab::merges
};

}  // namespace lowbit
