#include <cstdint>

#include "kernels/int1_lut.h"

namespace lowbit {

void int1_lut_tables_ref(const int8_t* x, int64_t k, uint8_t* out) {
  for (int64_t u = 0; u < (k + kInt1LutUnitK - 1) / kInt1LutUnitK; ++u) {
    uint8_t* unit = out + u * kInt1LutUnitBytes;
    for (int q = 0; q < 4; ++q) {
      const int8_t* xq = x + u * kInt1LutUnitK + 4 * q;
      // Quad q's low bytes at 64 (q % 2) + 16 (q / 2), its high bytes 32 further.
      uint8_t* low = unit + 64 * (q % 2) + 16 * (q / 2);
      for (int e = 0; e < 16; ++e) {
        int entry = 0;
        for (int j = 0; j < 4; ++j)
          if ((e >> j) & 1) entry += xq[j];
        const auto bits = static_cast<uint16_t>(static_cast<int16_t>(entry));
        low[e] = static_cast<uint8_t>(bits & 0xff);
        low[32 + e] = static_cast<uint8_t>(bits >> 8);
      }
    }
  }
}

}  // namespace lowbit
