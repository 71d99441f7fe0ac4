// Ternary weights (-1, 0, +1) times one scale per tensor, read from any file
// format that can hold them: I2_S, TQ1_0 and TQ2_0 with one d shared by all
// blocks (BitNet's case), and F16 whose values are all in {-s, 0, +s}. The
// ternary kernel layouts (I2_S tiles, TL1, TL2) are all built from this view.
#pragma once

#include <cstdint>
#include <optional>

#include "core/thread_pool.h"
#include "kernels/matmul.h"

namespace lowbit {

struct TernaryScale {
  float unit;   // |value| of a nonzero weight as the format's dequantize_row yields it
  float scale;  // the float factor of the tensor: y = scale * sum_k t_nk x_k
};

// The tensor's single scale, or nullopt when w cannot be read as ternary with
// one scale (other type, TQ blocks with different d, F16 values off {-s,0,s},
// K not a whole number of blocks). Cheap for I2_S and TQ*; scans F16 (stops at
// the first value that does not fit).
std::optional<TernaryScale> ternary_scale(const WeightView& w);

// Calls emit(r, t) for every row r of w, on the pool, with t = the row's K values
// in {-1, 0, +1} (int8_t[K], valid during the call). The rows of each aligned
// group of `row_group` go to one thread, so layouts that share bytes between
// the rows of a group need no locking. Throws Error naming the
// tensor, row and column of a value that is neither 0 nor +-unit (a TQ2_0 code 3,
// an I2_S code 3).
void for_each_ternary_row(const WeightView& w, const TernaryScale& s, ThreadPool& pool, int64_t row_group,
                          FunctionRef<void(int64_t, const int8_t*)> emit);

}  // namespace lowbit
