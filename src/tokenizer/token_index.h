// Token text -> id: an open-addressing hash table over the vocabulary's own
// strings (which must outlive the index), built once per tokenizer. A text
// that occurs twice maps to its last id, as in llama.cpp.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace lowbit {

class TokenIndex {
 public:
  explicit TokenIndex(const Vocab& vocab);
  // -1 when the text is not a token.
  int32_t find(std::string_view text) const;

 private:
  struct Slot {
    uint32_t hash = 0;  // high bits of the text's hash, to skip most string compares
    int32_t id = -1;    // -1: empty
  };
  static uint64_t hash_of(std::string_view text);

  const std::vector<std::string>& tokens_;
  std::vector<Slot> slots_;  // [power of two >= 2 * n_vocab]
  uint64_t mask_ = 0;
};

}  // namespace lowbit
