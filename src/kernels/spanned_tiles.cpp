#include "kernels/spanned_tiles.h"

#include <algorithm>

namespace lowbit {

std::vector<int64_t> span_starts(int64_t cols, int64_t unit_columns, int64_t max_units) {
  const int64_t units = cols / unit_columns;
  const int64_t wanted = std::max<int64_t>(1, (units + max_units - 1) / max_units);
  const int64_t per_span = std::max<int64_t>(1, (units + wanted - 1) / wanted);
  std::vector<int64_t> starts{0};
  for (int64_t u = per_span; u < units; u += per_span) starts.push_back(u * unit_columns);
  return starts;
}

}  // namespace lowbit
