#include <algorithm>

#include "core/error.h"
#include "kernels/matmul.h"

namespace lowbit {

namespace {

// A few tokens, kernels that read pairs (Matmul::pairs_with): unit v of the
// region's first half goes with unit v + half of its second, so each thread
// reads two streams half the region apart, side by side. Streams tens of KB
// apart read slower than one; a half region (0.7-3.5 MB in a 2B-4T layer) is
// far enough (kernels/read_streams.h).
void forward_pairs(std::span<const Matmul* const> ms, const ActivationBatch& in, std::span<float* const> ys,
                   int64_t total, ThreadPool& pool) {
  const int64_t half = (total + 1) / 2;
  // Matrix and unit of a region unit (a few matrices: a scan).
  const auto locate = [&](int64_t u, size_t* i) {
    for (*i = 0; u >= ms[*i]->work_units(); ++*i) u -= ms[*i]->work_units();
    return u;
  };
  pool.parallel_for(half, std::max<int64_t>(1, half / (8 * pool.size())), [&](int64_t begin, int64_t end, int) {
    for (int64_t v = begin; v < end; ++v) {
      size_t a = 0, b = 0;
      const int64_t ua = locate(v, &a);
      if (v + half < total) {
        const int64_t ub = locate(v + half, &b);
        ms[a]->forward_pair(*ms[b], in, ys[a], ys[b], ua, ub);
      } else {
        ms[a]->forward_units(in, ys[a], ua, ua + 1);
      }
    }
  });
}

}  // namespace

void forward_together(std::span<const Matmul* const> ms, const ActivationBatch& in, std::span<float* const> ys,
                      ThreadPool& pool) {
  if (ms.size() != ys.size()) fail("forward_together: ", ms.size(), " matrices but ", ys.size(), " outputs");
  const bool units = std::all_of(ms.begin(), ms.end(), [](const Matmul* m) { return m->work_units() > 0; });
  if (!units) {
    for (size_t i = 0; i < ms.size(); ++i) ms[i]->forward(in, ys[i], pool);
    return;
  }
  int64_t total = 0;
  for (const Matmul* m : ms) {
    m->prepare_units(in, pool);
    total += m->work_units();
  }
  const bool pairs = std::all_of(ms.begin(), ms.end(), [&](const Matmul* m) { return ms[0]->pairs_with(*m, in.tokens()); });
  if (pairs) return forward_pairs(ms, in, ys, total, pool);
  // Small chunks balance the threads' loads; kernels with a per-call cost
  // (i2s's lookup tables for many tokens) take one range per thread instead.
  const bool one_range = std::any_of(ms.begin(), ms.end(), [&](const Matmul* m) { return m->wants_one_range_per_thread(in); });
  const int64_t chunk = one_range ? (total + pool.size() - 1) / pool.size()
                                  : std::max<int64_t>(1, total / (8 * pool.size()));
  // Units of one shared range, matrix after matrix; offsets are summed as the
  // chunk goes (no allocation: this runs for every matrix of every token).
  pool.parallel_for(total, chunk, [&](int64_t begin, int64_t end, int) {
    int64_t first = 0;
    for (size_t i = 0; i < ms.size() && first < end; ++i) {
      const int64_t units = ms[i]->work_units();
      const int64_t b = std::max(begin, first), e = std::min(end, first + units);
      if (b < e) ms[i]->forward_units(in, ys[i], b - first, e - first);
      first += units;
    }
  });
}

}  // namespace lowbit
