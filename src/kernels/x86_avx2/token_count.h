// Kernels templated on how many tokens they take at once, chosen at run time.
#pragma once

#include <type_traits>

namespace lowbit::avx2 {

// f(std::integral_constant<int, count>{}) for count kMin..3, and 4 for more
// (the most any caller takes at once).
template <int kMin = 1, class F>
inline void with_token_count(int count, F f) {
  static_assert(kMin >= 1 && kMin <= 4);
  if constexpr (kMin <= 1)
    if (count == 1) return f(std::integral_constant<int, 1>{});
  if constexpr (kMin <= 2)
    if (count == 2) return f(std::integral_constant<int, 2>{});
  if constexpr (kMin <= 3)
    if (count == 3) return f(std::integral_constant<int, 3>{});
  f(std::integral_constant<int, 4>{});
}

}  // namespace lowbit::avx2
