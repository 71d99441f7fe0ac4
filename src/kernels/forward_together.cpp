#include <algorithm>

#include "core/error.h"
#include "kernels/matmul.h"

namespace lowbit {

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
  const int64_t chunk = std::max<int64_t>(1, total / (8 * pool.size()));
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
