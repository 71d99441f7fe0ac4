// Splitting special tokens out of text before the tokenizer proper runs, as
// llama.cpp does: control (and unknown) tokens only when asked to parse
// special text, user-defined tokens always. Longer tokens are taken first.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace lowbit {

// A piece of the input: either raw text (token < 0) or one special token.
struct TextFragment {
  std::string_view text;
  int32_t token = -1;
};

class SpecialTokenSplitter {
 public:
  explicit SpecialTokenSplitter(const Vocab& vocab);
  std::vector<TextFragment> split(std::string_view text, bool parse_special) const;

 private:
  struct Special {
    std::string_view text;  // into the vocabulary, which outlives this
    int32_t id;
    bool always;  // user-defined: split even when not parsing special text
  };
  std::vector<Special> specials_;  // longest first
};

}  // namespace lowbit
