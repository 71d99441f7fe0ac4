#include "quant/q3_k.h"

#include <algorithm>
#include <cmath>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

void q3_k_scale_codes(const uint8_t* scales, int* codes) {
  for (int s = 0; s < 16; ++s) {
    const int low = s < 8 ? scales[s] & 15 : scales[s - 8] >> 4;
    const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    codes[s] = low | high << 4;
  }
}

void unpack_q3_k_values(const BlockQ3_K& b, int8_t* v) {
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 32; ++l) {
        const int low = (b.qs[32 * h + l] >> (2 * j)) & 3;
        const bool high = (b.hmask[l] >> (4 * h + j)) & 1;
        v[128 * h + 32 * j + l] = static_cast<int8_t>(high ? low : low - 4);
      }
}

void dequantize_row_q3_K(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("q3_K", n, kQ3_KBlockSize);
  int8_t v[kQ3_KBlockSize];
  int codes[16];
  for (int64_t i = 0; i < n / kQ3_KBlockSize; ++i) {
    const auto b = load_block<BlockQ3_K>(row, i);
    unpack_q3_k_values(b, v);
    q3_k_scale_codes(b.scales, codes);
    const float d = fp16_to_float(b.d);
    float* out = dst + i * kQ3_KBlockSize;
    for (int s = 0; s < 16; ++s) {
      const float step = d * static_cast<float>(codes[s] - 32);
      for (int l = 0; l < 16; ++l) out[16 * s + l] = step * static_cast<float>(v[16 * s + l]);
    }
  }
}

void quantize_row_q3_K(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q3_K", n, kQ3_KBlockSize);
  for (int64_t i = 0; i < n / kQ3_KBlockSize; ++i) {
    const float* x = src + i * kQ3_KBlockSize;
    float step[16], max_step = 0.0f;
    for (int s = 0; s < 16; ++s) {
      const float* e = x + 16 * s;
      const float lo = std::min(0.0f, *std::min_element(e, e + 16)), hi = std::max(0.0f, *std::max_element(e, e + 16));
      step[s] = std::max(-lo / 4.0f, hi / 3.0f);
      max_step = std::max(max_step, step[s]);
    }
    BlockQ3_K b{};
    const float d = fp16_at_least(std::min(max_step / 31.0f, 65504.0f));
    b.d = float_to_fp16(d);
    int codes[16];
    int8_t v[kQ3_KBlockSize];
    for (int s = 0; s < 16; ++s) {
      const int sc = d > 0 ? std::min(31, static_cast<int>(std::ceil(step[s] / d))) : 0;
      codes[s] = 32 + sc;
      const float st = d * static_cast<float>(sc);
      for (int l = 0; l < 16; ++l) {
        const int q = st > 0 ? static_cast<int>(std::lround(x[16 * s + l] / st)) : 0;
        v[16 * s + l] = static_cast<int8_t>(std::clamp(q, -4, 3));
      }
    }
    for (int s = 0; s < 16; ++s) {
      if (s < 8) b.scales[s] = static_cast<uint8_t>(b.scales[s] | (codes[s] & 15));
      else b.scales[s - 8] = static_cast<uint8_t>(b.scales[s - 8] | (codes[s] & 15) << 4);
      b.scales[8 + s % 4] = static_cast<uint8_t>(b.scales[8 + s % 4] | (codes[s] >> 4) << (2 * (s / 4)));
    }
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 4; ++j)
        for (int l = 0; l < 32; ++l) {
          const int u = v[128 * h + 32 * j + l] + 4;  // 0..7
          b.qs[32 * h + l] = static_cast<uint8_t>(b.qs[32 * h + l] | (u & 3) << (2 * j));
          b.hmask[l] = static_cast<uint8_t>(b.hmask[l] | (u >> 2) << (4 * h + j));
        }
    store_block(row, i, b);
  }
}

float dot_q3_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n) {
  check_row_length("q3_K", n, kQ3_KBlockSize);
  float y = 0;
  int8_t v[kQ3_KBlockSize];
  int codes[16];
  for (int64_t i = 0; i < n / kQ3_KBlockSize; ++i) {
    const auto b = load_block<BlockQ3_K>(row, i);
    unpack_q3_k_values(b, v);
    q3_k_scale_codes(b.scales, codes);
    const int8_t* qb = q + i * kQ3_KBlockSize;
    int32_t block = 0;
    for (int s = 0; s < 16; ++s) {
      int32_t sub = 0;
      for (int l = 16 * s; l < 16 * s + 16; ++l) sub += v[l] * qb[l];
      block += (codes[s] - 32) * sub;
    }
    y += static_cast<float>(block) * (fp16_to_float(b.d) * dx[i]);
  }
  return y;
}

}  // namespace lowbit
