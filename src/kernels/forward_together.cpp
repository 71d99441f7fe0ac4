#include <algorithm>
#include <vector>

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
  // Matrix i owns units [first[i], first[i + 1]) of one shared range.
  std::vector<int64_t> first(ms.size() + 1, 0);
  for (size_t i = 0; i < ms.size(); ++i) {
    ms[i]->prepare_units(in, pool);
    first[i + 1] = first[i] + ms[i]->work_units();
  }
  const int64_t total = first.back();
  const int64_t chunk = std::max<int64_t>(1, total / (8 * pool.size()));
  pool.parallel_for(total, chunk, [&](int64_t begin, int64_t end, int) {
    for (size_t i = 0; i < ms.size(); ++i) {
      const int64_t b = std::max(begin, first[i]), e = std::min(end, first[i + 1]);
      if (b < e) ms[i]->forward_units(in, ys[i], b - first[i], e - first[i]);
    }
  });
}

}  // namespace lowbit
