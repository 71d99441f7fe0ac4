// BPE merges by token pair: (left id, right id) -> (rank, merged id), an
// open-addressing hash table, since encoding looks a pair up for every
// adjacent pair of every word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lowbit {

class MergeTable {
 public:
  struct Merge {
    int32_t rank = -1;    // lower merges first; -1: no merge
    int32_t result = -1;  // the token the pair becomes
  };

  explicit MergeTable(size_t n_merges);
  // Keeps the first (lowest-rank) merge of a pair added twice.
  void add(int32_t left, int32_t right, Merge merge);
  // rank -1 when the pair does not merge.
  Merge find(int32_t left, int32_t right) const;

 private:
  struct Slot {
    uint64_t key = kEmpty;
    Merge merge;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t key_of(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  uint64_t first_slot(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }

  std::vector<Slot> slots_;  // [power of two >= 4/3 n_merges]
  uint64_t mask_ = 0;
  int shift_ = 0;
};

}  // namespace lowbit
