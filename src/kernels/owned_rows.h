// A copy of a matrix in the file's own row layout, in memory the kernel owns:
// for the families that compute straight from that layout (f16, q6_k,
// q6_k_q8k). The copy sits on huge pages (Model::load's HugePageScope):
// streamed from the file's 4 KiB pages, the F16 head ran ~1.4x slower per
// byte (TLB misses), and the file's pages can then be dropped.
#pragma once

#include <cstring>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"

namespace lowbit {

// w.rows rows of row_bytes each, copied on the pool.
inline AlignedBuffer<uint8_t> copy_rows(const WeightView& w, int64_t row_bytes, ThreadPool& pool) {
  AlignedBuffer<uint8_t> rows(static_cast<size_t>(row_bytes * w.rows));
  pool.parallel_for(w.rows, 1024, [&](int64_t begin, int64_t end, int) {
    std::memcpy(rows.data() + begin * row_bytes, w.data + begin * row_bytes, static_cast<size_t>((end - begin) * row_bytes));
  });
  return rows;
}

}  // namespace lowbit
