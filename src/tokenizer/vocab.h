// The data of a tokenizer vocabulary, independent of where it was read from
// (GGUF, llama2.c tokenizer.bin, Hugging Face tokenizer.json) and of the
// algorithm that uses it (tokenizer.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit {

// GGUF token types (tokenizer.ggml.token_type), as llama.cpp writes them.
enum TokenType : int32_t {
  kTokenNormal = 1,
  kTokenUnknown = 2,
  kTokenControl = 3,
  kTokenUserDefined = 4,
  kTokenUnused = 5,
  kTokenByte = 6,
};

struct Vocab {
  enum class Kind { Spm, Bpe };  // SentencePiece-style (llama) / byte-level BPE (gpt2, Llama 3)
  Kind kind = Kind::Spm;
  std::vector<std::string> tokens;   // [n_vocab] as in the GGUF (SPM pieces use U+2581 for space)
  std::vector<float> scores;         // [n_vocab] SPM merge priorities (empty for BPE)
  std::vector<int32_t> token_types;  // [n_vocab] TokenType
  std::vector<std::string> merges;   // BPE: "a b" in priority order
  std::string pre = "default";       // tokenizer.ggml.pre: "default", "llama-bpe", ...
  int32_t bos = -1, eos = -1, eot = -1, unk = -1, pad = -1;
  bool add_bos = true, add_space_prefix = true;
  // Where it came from (a file's path), for the tokenizer's errors to name.
  std::string source = "tokenizer";

  int32_t n_vocab() const { return static_cast<int32_t>(tokens.size()); }
};

// Checks that the arrays agree in size, that special ids are in range and that
// an SPM vocabulary has scores. Throws Error("SOURCE: ...") naming what is wrong.
void validate_vocab(const Vocab& vocab, const std::string& source);

// Llama 3's special-token names by offset from the first special id
// (0 <|begin_of_text|>, 1 <|end_of_text|>, 6 <|start_header_id|>, 9 <|eot_id|>,
// others <|reserved_special_token_N|>, N counting up).
std::vector<std::string> llama3_special_token_names(int32_t n_special);

// The id of the first of `names` that is a token, or -1 (for vocabularies that
// do not say which token ends a turn, as llama.cpp does).
int32_t find_token_by_names(const Vocab& vocab, const std::vector<std::string>& names);

}  // namespace lowbit
