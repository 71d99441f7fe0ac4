#include "quant/iq4_xs.h"

#include <algorithm>
#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"
#include "quant/iq4_nl.h"

namespace lowbit {

void dequantize_row_iq4_xs(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("iq4_xs", n, kIq4XsBlockSize);
  for (int64_t i = 0; i < n / kIq4XsBlockSize; ++i) {
    const auto b = load_block<BlockIq4Xs>(row, i);
    const float d = fp16_to_float(b.d);
    for (int j = 0; j < 8; ++j) {
      const float step = d * static_cast<float>(iq4_xs_scale_code(b, j) - 32);
      float* out = dst + i * kIq4XsBlockSize + 32 * j;
      for (int l = 0; l < 16; ++l) {
        out[l] = step * static_cast<float>(kIq4NlValues[b.qs[16 * j + l] & 15]);
        out[l + 16] = step * static_cast<float>(kIq4NlValues[b.qs[16 * j + l] >> 4]);
      }
    }
  }
}

void quantize_row_iq4_xs(const float* src, uint8_t* row, int64_t n) {
  check_row_length("iq4_xs", n, kIq4XsBlockSize);
  for (int64_t i = 0; i < n / kIq4XsBlockSize; ++i) {
    const float* x = src + i * kIq4XsBlockSize;
    float scale[8], max_scale = 0.0f;
    for (int j = 0; j < 8; ++j) {
      float top = 0.0f;  // the largest-magnitude element, with its sign
      for (int l = 0; l < 32; ++l)
        if (std::fabs(x[32 * j + l]) > std::fabs(top)) top = x[32 * j + l];
      scale[j] = top / -127.0f;
      max_scale = std::max(max_scale, std::fabs(scale[j]));
    }
    BlockIq4Xs b{};
    const float d = fp16_at_least(std::min(max_scale / 31.0f, 65504.0f));
    b.d = float_to_fp16(d);
    for (int j = 0; j < 8; ++j) {
      const int code = d > 0 ? std::clamp(static_cast<int>(std::lround(scale[j] / d)) + 32, 0, 63) : 32;
      b.scales_l[j / 2] = static_cast<uint8_t>(b.scales_l[j / 2] | (code & 15) << (4 * (j % 2)));
      b.scales_h = static_cast<uint16_t>(b.scales_h | (code >> 4) << (2 * j));
      const float step = d * static_cast<float>(code - 32);
      const float inv = step != 0.0f ? 1.0f / step : 0.0f;
      for (int l = 0; l < 16; ++l) {
        const int lo = iq4_nl_nearest_index(x[32 * j + l] * inv), hi = iq4_nl_nearest_index(x[32 * j + l + 16] * inv);
        b.qs[16 * j + l] = static_cast<uint8_t>(lo | hi << 4);
      }
    }
    store_block(row, i, b);
  }
}

float dot_iq4_xs_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n) {
  check_row_length("iq4_xs", n, kIq4XsBlockSize);
  float y = 0;
  for (int64_t i = 0; i < n / kIq4XsBlockSize; ++i) {
    const auto b = load_block<BlockIq4Xs>(row, i);
    const int8_t* qb = q + i * kIq4XsBlockSize;
    int32_t block = 0;
    for (int j = 0; j < 8; ++j) {
      int32_t sub = 0;
      for (int l = 0; l < 16; ++l) {
        sub += kIq4NlValues[b.qs[16 * j + l] & 15] * qb[32 * j + l];
        sub += kIq4NlValues[b.qs[16 * j + l] >> 4] * qb[32 * j + l + 16];
      }
      block += (iq4_xs_scale_code(b, j) - 32) * sub;
    }
    y += static_cast<float>(block) * (fp16_to_float(b.d) * dx[i]);
  }
  return y;
}

}  // namespace lowbit
