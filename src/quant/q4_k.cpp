#include "quant/q4_k.h"

#include <algorithm>
#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

void unpack_q4_k_values(const BlockQ4_K& b, uint8_t* v) {
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) {
      v[64 * p + l] = b.qs[32 * p + l] & 15;
      v[64 * p + 32 + l] = b.qs[32 * p + l] >> 4;
    }
}

void dequantize_k_block(uint16_t d16, uint16_t dmin16, const uint8_t* scales, const uint8_t* v, float* dst) {
  const float d = fp16_to_float(d16), dmin = fp16_to_float(dmin16);
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    q4_k_scale_min(scales, j, &sc, &m);
    const float step = d * static_cast<float>(sc), offset = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) {
      const float product = step * static_cast<float>(v[32 * j + l]);
      dst[32 * j + l] = product - offset;
    }
  }
}

void dequantize_row_q4_K(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("q4_K", n, kQ4_KBlockSize);
  uint8_t v[kQ4_KBlockSize];
  for (int64_t i = 0; i < n / kQ4_KBlockSize; ++i) {
    const auto b = load_block<BlockQ4_K>(row, i);
    unpack_q4_k_values(b, v);
    dequantize_k_block(b.d, b.dmin, b.scales, v, dst + i * kQ4_KBlockSize);
  }
}

void quantize_k_block(const float* x, int max_q, uint16_t* d16, uint16_t* dmin16, uint8_t* scales, uint8_t* q) {
  float step[8], offset[8], max_step = 0.0f, max_offset = 0.0f;
  for (int j = 0; j < 8; ++j) {
    const float* s = x + 32 * j;
    const float lo = std::min(0.0f, *std::min_element(s, s + 32)), hi = *std::max_element(s, s + 32);
    step[j] = (hi - lo) / static_cast<float>(max_q);
    offset[j] = -lo;
    max_step = std::max(max_step, step[j]);
    max_offset = std::max(max_offset, offset[j]);
  }
  const float d = fp16_at_least(std::min(max_step / 63.0f, 65504.0f));
  const float dmin = fp16_at_least(std::min(max_offset / 63.0f, 65504.0f));
  *d16 = float_to_fp16(d);
  *dmin16 = float_to_fp16(dmin);
  int sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = d > 0 ? std::min(63, static_cast<int>(std::ceil(step[j] / d))) : 0;
    m[j] = dmin > 0 ? std::min(63, static_cast<int>(std::lround(offset[j] / dmin))) : 0;
  }
  for (int j = 0; j < 4; ++j) {
    scales[j] = static_cast<uint8_t>((sc[j] & 63) | (sc[j + 4] >> 4) << 6);
    scales[j + 4] = static_cast<uint8_t>((m[j] & 63) | (m[j + 4] >> 4) << 6);
    scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
  }
  for (int j = 0; j < 8; ++j) {
    const float st = d * static_cast<float>(sc[j]), off = dmin * static_cast<float>(m[j]);
    for (int l = 0; l < 32; ++l) {
      const int v = st > 0 ? static_cast<int>(std::lround((x[32 * j + l] + off) / st)) : 0;
      q[32 * j + l] = static_cast<uint8_t>(std::clamp(v, 0, max_q));
    }
  }
}

void quantize_row_q4_K(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q4_K", n, kQ4_KBlockSize);
  uint8_t q[kQ4_KBlockSize];
  for (int64_t i = 0; i < n / kQ4_KBlockSize; ++i) {
    BlockQ4_K b{};
    quantize_k_block(src + i * kQ4_KBlockSize, 15, &b.d, &b.dmin, b.scales, q);
    for (int p = 0; p < 4; ++p)
      for (int l = 0; l < 32; ++l) b.qs[32 * p + l] = static_cast<uint8_t>(q[64 * p + l] | q[64 * p + 32 + l] << 4);
    store_block(row, i, b);
  }
}

float k_block_dot_q8k(uint16_t d16, uint16_t dmin16, const uint8_t* scales, const uint8_t* v, const int8_t* qb,
                      float dx) {
  int32_t dot = 0, offset = 0;
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    q4_k_scale_min(scales, j, &sc, &m);
    int32_t sub = 0, sum = 0;
    for (int l = 32 * j; l < 32 * j + 32; ++l) {
      sub += v[l] * qb[l];
      sum += qb[l];
    }
    dot += sc * sub;
    offset += m * sum;
  }
  return k_block_term(dot, offset, d16, dmin16, dx);
}

float k_block_term(int32_t dot, int32_t offset, uint16_t d16, uint16_t dmin16, float dx) {
  const float d = fp16_to_float(d16) * dx, dmin = fp16_to_float(dmin16) * dx;
  return static_cast<float>(dot) * d - static_cast<float>(offset) * dmin;
}

float dot_q4_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n) {
  check_row_length("q4_K", n, kQ4_KBlockSize);
  float y = 0;
  uint8_t v[kQ4_KBlockSize];
  for (int64_t i = 0; i < n / kQ4_KBlockSize; ++i) {
    const auto b = load_block<BlockQ4_K>(row, i);
    unpack_q4_k_values(b, v);
    y += k_block_dot_q8k(b.d, b.dmin, b.scales, v, q + i * kQ4_KBlockSize, dx[i]);
  }
  return y;
}

}  // namespace lowbit
