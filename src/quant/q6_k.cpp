#include "quant/q6_k.h"

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

void dequantize_row_q6_K(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("q6_K", n, kQ6_KBlockSize);
  for (int64_t i = 0; i < n / kQ6_KBlockSize; ++i) {
    const auto b = load_block<BlockQ6_K>(row, i);
    const float d = fp16_to_float(b.d);
    for (int64_t h = 0; h < 2; ++h) {
      const uint8_t* ql = b.ql + 64 * h;              // [64]
      const uint8_t* qh = b.qh + 32 * h;              // [32]
      const int8_t* sc = b.scales + 8 * h;            // [8]
      float* y = dst + i * kQ6_KBlockSize + 128 * h;  // [128]
      for (int64_t l = 0; l < 32; ++l) {
        const int q[4] = {
            ((ql[l] & 15) | ((qh[l] >> 0) & 3) << 4) - 32,
            ((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4) - 32,
            ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32,
            ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32,
        };
        for (int64_t k = 0; k < 4; ++k) y[l + 32 * k] = d * sc[l / 16 + 2 * k] * static_cast<float>(q[k]);
      }
    }
  }
}

}  // namespace lowbit
