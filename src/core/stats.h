// Small statistics for the timing tools and benchmarks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace lowbit {

// The median of v (the upper one of an even count); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace lowbit
