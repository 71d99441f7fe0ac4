#include "quant/q6_k.h"

#include <algorithm>
#include <cmath>

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

void quantize_row_q6_K(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q6_K", n, kQ6_KBlockSize);
  for (int64_t i = 0; i < n / kQ6_KBlockSize; ++i) {
    const float* x = src + i * kQ6_KBlockSize;  // [256]
    // The smallest step per sub-block that reaches both its extremes:
    // values run from -32 to +31.
    float want_step[16];
    float max_step = 0.0f;
    for (int64_t j = 0; j < 16; ++j) {
      float lo = 0.0f, hi = 0.0f;
      for (int64_t l = 0; l < 16; ++l) {
        lo = std::fmin(lo, x[16 * j + l]);
        hi = std::fmax(hi, x[16 * j + l]);
      }
      want_step[j] = std::fmax(-lo / 32.0f, hi / 31.0f);
      max_step = std::fmax(max_step, want_step[j]);
    }
    BlockQ6_K b{};
    // d rounded up to fp16, so that no sub-scale needs more than 127.
    b.d = float_to_fp16(max_step / 127.0f);
    if (fp16_to_float(b.d) < max_step / 127.0f) ++b.d;
    const float d = fp16_to_float(b.d);
    uint8_t q[kQ6_KBlockSize];  // value + 32, 0..63
    for (int64_t j = 0; j < 16; ++j) {
      // Rounded up: the step never falls short of the extremes.
      const float sc = d != 0.0f ? std::fmin(std::ceil(want_step[j] / d), 127.0f) : 0.0f;
      b.scales[j] = static_cast<int8_t>(sc);
      const float step = d * sc;
      for (int64_t l = 0; l < 16; ++l) {
        const float v = step != 0.0f ? std::round(x[16 * j + l] / step) : 0.0f;
        q[16 * j + l] = static_cast<uint8_t>(std::clamp(v, -32.0f, 31.0f) + 32.0f);
      }
    }
    // The bit layout of the header comment, per half-block h.
    for (int64_t h = 0; h < 2; ++h) {
      const uint8_t* v = q + 128 * h;
      for (int64_t l = 0; l < 32; ++l) {
        b.ql[64 * h + l] = static_cast<uint8_t>((v[l] & 15) | (v[l + 64] & 15) << 4);
        b.ql[64 * h + l + 32] = static_cast<uint8_t>((v[l + 32] & 15) | (v[l + 96] & 15) << 4);
        b.qh[32 * h + l] = static_cast<uint8_t>((v[l] >> 4) | (v[l + 32] >> 4) << 2 | (v[l + 64] >> 4) << 4 |
                                                (v[l + 96] >> 4) << 6);
      }
    }
    store_block(row, i, b);
  }
}

void quantize_activations_q8k(const float* x, int64_t n, int8_t* q, float* d) {
  check_row_length("q8_K activations", n, kQ6_KBlockSize);
  for (int64_t b = 0; b < n / kQ6_KBlockSize; ++b) {
    const float* xb = x + b * kQ6_KBlockSize;
    float amax = 0;
    for (int64_t i = 0; i < kQ6_KBlockSize; ++i) amax = std::max(amax, std::fabs(xb[i]));
    d[b] = amax / 127.0f;
    const float inv = amax > 0 ? 127.0f / amax : 0.0f;
    for (int64_t i = 0; i < kQ6_KBlockSize; ++i)
      q[b * kQ6_KBlockSize + i] = static_cast<int8_t>(std::clamp(std::nearbyint(xb[i] * inv), -127.0f, 127.0f));
  }
}

float dot_q6_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n) {
  check_row_length("q6_K", n, kQ6_KBlockSize);
  float y = 0;
  for (int64_t i = 0; i < n / kQ6_KBlockSize; ++i) {
    const auto b = load_block<BlockQ6_K>(row, i);
    const int8_t* qb = q + i * kQ6_KBlockSize;
    int32_t block = 0;
    for (int64_t h = 0; h < 2; ++h) {
      const uint8_t* ql = b.ql + 64 * h;
      const uint8_t* qh = b.qh + 32 * h;
      int32_t sub[8] = {};  // the half-block's 8 sub-blocks of 16
      for (int64_t l = 0; l < 32; ++l) {
        const int v[4] = {(ql[l] & 15) | ((qh[l] >> 0) & 3) << 4, (ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4,
                          (ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4, (ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4};
        for (int64_t k = 0; k < 4; ++k) sub[l / 16 + 2 * k] += (v[k] - 32) * qb[128 * h + l + 32 * k];
      }
      for (int64_t j = 0; j < 8; ++j) block += b.scales[8 * h + j] * sub[j];
    }
    const float s = fp16_to_float(b.d) * dx[i];
    y += static_cast<float>(block) * s;
  }
  return y;
}

}  // namespace lowbit
