// SentencePiece-style tokenization (Llama 2, llama2.c) with llama.cpp's
// semantics: spaces become U+2581 (one is prepended at the start of the text
// and after a special token), the text splits into UTF-8 characters, then the
// adjacent pair whose concatenation is the highest-scoring token is merged
// (ties: leftmost), until no pair is a token. Characters left that are not
// tokens fall back to <0xXX> byte tokens (or unk).
#pragma once

#include <array>

#include "tokenizer/token_index.h"
#include "tokenizer/tokenizer.h"

namespace lowbit {

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(Vocab vocab);

 private:
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;
  std::string piece_of(int32_t id) const override;
  // A symbol left after merging: its token, or its bytes' fallback tokens.
  void append_symbol(std::string_view symbol, std::vector<int32_t>& out) const;

  TokenIndex index_;
  std::array<int32_t, 256> byte_tokens_;  // id of <0xXX>, -1 when absent
};

}  // namespace lowbit
