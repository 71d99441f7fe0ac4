// Timing one matmul the way decoding runs it: each call finds its weights out
// of the caches, because a token streams a whole model, far larger than the
// last-level cache. Shared by `lowbit bench-gemv` and `lowbit roofline`.
#pragma once

#include "core/thread_pool.h"
#include "kernels/matmul.h"

namespace lowbit::tools {

// Median seconds of m.forward(in, ...) on `pool`, over calls each preceded by a
// read of a buffer twice the last-level cache (on the pool's threads) that
// evicts the caches.
// Calls repeat until they total min_seconds and number at least min_calls.
// `in` is quantized before the first timed call: the time is the matmul's alone
// (one quantization serves several matrices in a model).
double seconds_per_matmul(const Matmul& m, const ActivationBatch& in, ThreadPool& pool, double min_seconds,
                          int min_calls = 3);

}  // namespace lowbit::tools
