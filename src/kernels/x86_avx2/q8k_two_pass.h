// The k-quant x Q8_K rows (k_quant_q8k.h) take a row in two passes per chunk
// of blocks: first every block's integer sums, then the float arithmetic block
// after block. With each block's float tail right behind its sums the Q4_K row
// ran ~32 cycles per block on the Zen 3: the tail's long dependency chain
// (sums, cvtsi2ss, mulss, subss, addss) left too few blocks in flight; in two
// passes ~25.
#pragma once

#include <algorithm>
#include <cstdint>

namespace lowbit::avx2 {

inline constexpr int64_t kQ8KChunk = 32;  // blocks per chunk: the sums of one chunk wait on the stack

// sums(i, j) for every block i of a chunk (j: its place in the chunk), then
// tail(i, j) for them in order, chunk after chunk.
template <class Sums, class Tail>
inline void in_two_passes(int64_t blocks, Sums sums, Tail tail) {
  for (int64_t i0 = 0; i0 < blocks; i0 += kQ8KChunk) {
    const int64_t n = std::min(kQ8KChunk, blocks - i0);
    for (int64_t j = 0; j < n; ++j) sums(i0 + j, j);
    for (int64_t j = 0; j < n; ++j) tail(i0 + j, j);
  }
}

}  // namespace lowbit::avx2
