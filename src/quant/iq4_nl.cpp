#include "quant/iq4_nl.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

namespace {

constexpr int64_t kHalf = kIq4NlBlockSize / 2;

}  // namespace

int iq4_nl_nearest_index(float v) {
  static const auto midpoints = [] {
    std::array<float, 15> m{};
    for (size_t i = 0; i < m.size(); ++i) m[i] = 0.5f * static_cast<float>(kIq4NlValues[i] + kIq4NlValues[i + 1]);
    return m;
  }();
  return static_cast<int>(std::upper_bound(midpoints.begin(), midpoints.end(), v,
                                           [](float a, float b) { return a <= b; }) - midpoints.begin());
}

void unpack_iq4_nl_block(const BlockIq4Nl& b, int8_t* v) {
  for (int64_t j = 0; j < kHalf; ++j) {
    v[j] = kIq4NlValues[b.qs[j] & 0x0f];
    v[j + kHalf] = kIq4NlValues[b.qs[j] >> 4];
  }
}

void dequantize_row_iq4_nl(const uint8_t* row, float* dst, int64_t n) {
  dequantize_scaled_blocks<BlockIq4Nl, kIq4NlBlockSize, unpack_iq4_nl_block>("iq4_nl", row, dst, n);
}

void quantize_row_iq4_nl(const float* src, uint8_t* row, int64_t n) {
  check_row_length("iq4_nl", n, kIq4NlBlockSize);
  for (int64_t i = 0; i < n / kIq4NlBlockSize; ++i) {
    const float* x = src + i * kIq4NlBlockSize;  // [32]
    float max = 0.0f;  // the element of largest magnitude, with its sign
    for (int64_t j = 0; j < kIq4NlBlockSize; ++j)
      if (std::fabs(x[j]) > std::fabs(max)) max = x[j];
    BlockIq4Nl b{};
    int idx[kIq4NlBlockSize] = {};
    if (max != 0.0f) {
      // Candidate scales map `max` to -127 + t (t = -8..8, around the negative
      // end, the codebook's longer one); each is refitted by least squares.
      double best_err = INFINITY;
      float best_d = 0.0f;
      for (int t = -8; t <= 8; ++t) {
        const float inv = (static_cast<float>(kIq4NlValues[0]) + static_cast<float>(t)) / max;
        int cand[kIq4NlBlockSize];
        double xq = 0, qq = 0;
        for (int64_t j = 0; j < kIq4NlBlockSize; ++j) {
          cand[j] = iq4_nl_nearest_index(x[j] * inv);
          xq += static_cast<double>(x[j]) * kIq4NlValues[cand[j]];
          qq += static_cast<double>(kIq4NlValues[cand[j]]) * kIq4NlValues[cand[j]];
        }
        // As stored: in fp16, clamped to its largest finite value (beyond it
        // the block would dequantize to infinities).
        const double fit = std::fmax(-65504.0, std::fmin(65504.0, xq / qq));
        const float d = fp16_to_float(float_to_fp16(static_cast<float>(fit)));
        double err = 0;
        for (int64_t j = 0; j < kIq4NlBlockSize; ++j) {
          const double e = static_cast<double>(x[j]) - static_cast<double>(d) * kIq4NlValues[cand[j]];
          err += e * e;
        }
        if (err < best_err) {
          best_err = err;
          best_d = d;
          for (int64_t j = 0; j < kIq4NlBlockSize; ++j) idx[j] = cand[j];
        }
      }
      b.d = float_to_fp16(best_d);
    }
    for (int64_t j = 0; j < kHalf; ++j) b.qs[j] = static_cast<uint8_t>(idx[j] | (idx[j + kHalf] << 4));
    store_block(row, i, b);
  }
}

float dot_i8_iq4_nl(const uint8_t* row, const int8_t* q, int64_t n) {
  return dot_i8_scaled_blocks<BlockIq4Nl, kIq4NlBlockSize, unpack_iq4_nl_block>("iq4_nl", row, q, n);
}

}  // namespace lowbit
