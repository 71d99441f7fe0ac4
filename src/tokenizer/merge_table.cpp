#include "tokenizer/merge_table.h"

namespace lowbit {

MergeTable::MergeTable(size_t n_merges) {
  int bits = 4;
  while ((size_t{1} << bits) * 3 < 4 * n_merges) ++bits;  // load factor <= 3/4
  slots_.resize(size_t{1} << bits);
  mask_ = slots_.size() - 1;
  shift_ = 64 - bits;
}

void MergeTable::add(int32_t left, int32_t right, Merge merge) {
  const uint64_t key = key_of(left, right);
  for (uint64_t i = first_slot(key);; i = (i + 1) & mask_) {
    Slot& slot = slots_[i];
    if (slot.key == key) return;
    if (slot.key == kEmpty) {
      slot = {key, merge};
      return;
    }
  }
}

MergeTable::Merge MergeTable::find(int32_t left, int32_t right) const {
  const uint64_t key = key_of(left, right);
  for (uint64_t i = first_slot(key);; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.key == key) return slot.merge;
    if (slot.key == kEmpty) return {};
  }
}

}  // namespace lowbit
