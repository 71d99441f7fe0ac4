#include "quant/q2_k.h"

#include <algorithm>
#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"
#include "quant/q4_k.h"

namespace lowbit {

void unpack_q2_k_values(const BlockQ2_K& b, uint8_t* v) {
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 32; ++l) v[128 * h + 32 * j + l] = (b.qs[32 * h + l] >> (2 * j)) & 3;
}

void dequantize_row_q2_K(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("q2_K", n, kQ2_KBlockSize);
  uint8_t v[kQ2_KBlockSize];
  for (int64_t i = 0; i < n / kQ2_KBlockSize; ++i) {
    const auto b = load_block<BlockQ2_K>(row, i);
    unpack_q2_k_values(b, v);
    const float d = fp16_to_float(b.d), dmin = fp16_to_float(b.dmin);
    float* out = dst + i * kQ2_KBlockSize;
    for (int s = 0; s < 16; ++s) {
      const float step = d * static_cast<float>(b.scales[s] & 15), offset = dmin * static_cast<float>(b.scales[s] >> 4);
      for (int l = 0; l < 16; ++l) {
        const float product = step * static_cast<float>(v[16 * s + l]);
        out[16 * s + l] = product - offset;
      }
    }
  }
}

void quantize_row_q2_K(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q2_K", n, kQ2_KBlockSize);
  for (int64_t i = 0; i < n / kQ2_KBlockSize; ++i) {
    const float* x = src + i * kQ2_KBlockSize;
    float step[16], offset[16], max_step = 0.0f, max_offset = 0.0f;
    for (int s = 0; s < 16; ++s) {
      const float* e = x + 16 * s;
      const float lo = std::min(0.0f, *std::min_element(e, e + 16)), hi = *std::max_element(e, e + 16);
      step[s] = (hi - lo) / 3.0f;
      offset[s] = -lo;
      max_step = std::max(max_step, step[s]);
      max_offset = std::max(max_offset, offset[s]);
    }
    BlockQ2_K b{};
    const float d = fp16_at_least(std::min(max_step / 15.0f, 65504.0f));
    const float dmin = fp16_at_least(std::min(max_offset / 15.0f, 65504.0f));
    b.d = float_to_fp16(d);
    b.dmin = float_to_fp16(dmin);
    uint8_t q[kQ2_KBlockSize];
    for (int s = 0; s < 16; ++s) {
      const int sc = d > 0 ? std::min(15, static_cast<int>(std::ceil(step[s] / d))) : 0;
      const int m = dmin > 0 ? std::min(15, static_cast<int>(std::lround(offset[s] / dmin))) : 0;
      b.scales[s] = static_cast<uint8_t>(sc | m << 4);
      const float st = d * static_cast<float>(sc), off = dmin * static_cast<float>(m);
      for (int l = 0; l < 16; ++l) {
        const int v = st > 0 ? static_cast<int>(std::lround((x[16 * s + l] + off) / st)) : 0;
        q[16 * s + l] = static_cast<uint8_t>(std::clamp(v, 0, 3));
      }
    }
    for (int h = 0; h < 2; ++h)
      for (int l = 0; l < 32; ++l) {
        uint8_t byte = 0;
        for (int j = 0; j < 4; ++j) byte = static_cast<uint8_t>(byte | q[128 * h + 32 * j + l] << (2 * j));
        b.qs[32 * h + l] = byte;
      }
    store_block(row, i, b);
  }
}

float dot_q2_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n) {
  check_row_length("q2_K", n, kQ2_KBlockSize);
  float y = 0;
  uint8_t v[kQ2_KBlockSize];
  for (int64_t i = 0; i < n / kQ2_KBlockSize; ++i) {
    const auto b = load_block<BlockQ2_K>(row, i);
    unpack_q2_k_values(b, v);
    const int8_t* qb = q + i * kQ2_KBlockSize;
    int32_t dot = 0, offset = 0;
    for (int j = 0; j < 16; ++j) {
      int32_t sub = 0, sum = 0;
      for (int l = 16 * j; l < 16 * j + 16; ++l) {
        sub += v[l] * qb[l];
        sum += qb[l];
      }
      dot += (b.scales[j] & 15) * sub;
      offset += (b.scales[j] >> 4) * sum;
    }
    y += k_block_term(dot, offset, b.d, b.dmin, dx[i]);
  }
  return y;
}

}  // namespace lowbit
