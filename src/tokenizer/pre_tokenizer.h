// Pre-tokenization for byte-level BPE: the text is split into words with
// regular expressions before merges run inside each word. Which expressions
// apply is named by tokenizer.ggml.pre; the table follows llama.cpp's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex_splitter.h"

namespace lowbit {

struct PreTokenizerSpec {
  std::vector<std::string> names;    // tokenizer.ggml.pre values; names[0] is what we write
  std::vector<std::string> regexes;  // applied in turn, each splitting the pieces of the one before
  std::string hf_regex;              // the same split as tokenizer.json writes it ("" when none)
  bool ignore_merges = false;        // a word that is itself a token is not merged (Llama 3)
  bool add_bos = false;              // when the file does not say (tokenizer.ggml.add_bos_token)
};

// nullptr when the name is not in the table.
const PreTokenizerSpec* find_pre_tokenizer(std::string_view pre);
// "default, gpt-2, llama-bpe, ..." for error messages.
std::string known_pre_tokenizer_names();
// The spec whose hf_regex is `regex` (a Split pre-tokenizer of tokenizer.json), or nullptr.
const PreTokenizerSpec* find_pre_tokenizer_by_hf_regex(std::string_view regex);

class PreTokenizer {
 public:
  explicit PreTokenizer(const PreTokenizerSpec& spec);
  // The words of `text`, as views into it; they concatenate back to `text`.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  std::vector<RegexSplitter> splitters_;
};

}  // namespace lowbit
