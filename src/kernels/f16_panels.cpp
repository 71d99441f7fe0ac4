#include "kernels/f16_panels.h"

#include <algorithm>
#include <cstring>

namespace lowbit {

AlignedBuffer<uint16_t> pack_f16_panels(const WeightView& w, ThreadPool& pool) {
  const int64_t panels = (w.rows + kF16PanelRows - 1) / kF16PanelRows, k = w.cols;
  AlignedBuffer<uint16_t> out(static_cast<size_t>(panels * kF16PanelRows * k));
  const auto* src = reinterpret_cast<const uint16_t*>(w.data);
  pool.parallel_for(panels, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t p = begin; p < end; ++p) {
      uint16_t* dst = out.data() + p * kF16PanelRows * k;
      const int64_t rows = std::min<int64_t>(kF16PanelRows, w.rows - p * kF16PanelRows);
      if (rows < kF16PanelRows) std::memset(dst, 0, static_cast<size_t>(kF16PanelRows * k) * sizeof(uint16_t));
      // Row by row: each source row read once in order, the panel (240 KB
      // at k = 2560) written in L2.
      for (int64_t i = 0; i < rows; ++i) {
        const uint16_t* row = src + (p * kF16PanelRows + i) * k;
        for (int64_t c = 0; c < k; ++c) dst[c * kF16PanelRows + i] = row[c];
      }
    }
  });
  return out;
}

}  // namespace lowbit
