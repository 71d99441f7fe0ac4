#include "tokenizer/token_index.h"

#include <functional>

namespace lowbit {

uint64_t TokenIndex::hash_of(std::string_view text) { return std::hash<std::string_view>{}(text); }

TokenIndex::TokenIndex(const Vocab& vocab) : tokens_(vocab.tokens) {
  size_t capacity = 16;
  while (capacity < 2 * tokens_.size()) capacity *= 2;
  slots_.resize(capacity);
  mask_ = capacity - 1;
  for (int32_t id = 0; id < vocab.n_vocab(); ++id) {
    const std::string& text = tokens_[id];
    const uint64_t h = hash_of(text);
    for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.id < 0 || (slot.hash == static_cast<uint32_t>(h >> 32) && tokens_[slot.id] == text)) {
        slot = {static_cast<uint32_t>(h >> 32), id};
        break;
      }
    }
  }
}

int32_t TokenIndex::find(std::string_view text) const {
  const uint64_t h = hash_of(text);
  for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id < 0) return -1;
    if (slot.hash == static_cast<uint32_t>(h >> 32) && tokens_[slot.id] == text) return slot.id;
  }
}

}  // namespace lowbit
