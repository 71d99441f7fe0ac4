// When a one-token GEMV reads several parts of its weights side by side.
#pragma once

#include <cstdint>

namespace lowbit {

// On Zen 5 one core keeps more loads in flight over a few weight streams far
// apart than over one (the F16 and Q8_0 heads: 10-20% more GB/s; a plain read:
// 12-14%), but streams close together read slower than one: at 1 thread the
// F16 head's rows 20 KB apart lost 9%, 80 KB apart gained 3%, 320 KB 8%; int2
// row blocks 30-90 KB apart lost 5-25% at 2 threads (docs/performance.md
// "Session 11"). So a GEMV reads side by side only parts at least this far
// apart: the heads qualify, a 2B-4T layer's chunks (tens of KB apart) do not.
inline constexpr int64_t kStreamsMinApartBytes = int64_t{1} << 20;

}  // namespace lowbit
