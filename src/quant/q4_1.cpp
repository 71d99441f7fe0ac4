#include "quant/q4_1.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "quant/block_rows.h"

namespace lowbit {

void unpack_q4_1_values(const uint8_t* qs, uint8_t* v) {
  for (int j = 0; j < 16; ++j) {
    v[j] = qs[j] & 15;
    v[j + 16] = qs[j] >> 4;
  }
}

void unpack_q5_values(const uint8_t* qs, const uint8_t* qh, uint8_t* v) {
  uint32_t high;
  std::memcpy(&high, qh, 4);
  unpack_q4_1_values(qs, v);
  for (int e = 0; e < 32; ++e) v[e] = static_cast<uint8_t>(v[e] | ((high >> e) & 1) << 4);
}

namespace {

// d * q + m per element, each step rounded (the formula of Q4_1 and Q5_1).
void dequantize_with_min(float d, float m, const uint8_t* v, float* dst) {
  for (int e = 0; e < 32; ++e) {
    const float product = d * static_cast<float>(v[e]);
    dst[e] = product + m;
  }
}

// The values of one block with a min: m the minimum in fp16, d the step.
void quantize_with_min(const float* x, int max_q, uint16_t* d16, uint16_t* m16, uint8_t* v) {
  const float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
  const float m = fp16_to_float(float_to_fp16(std::clamp(lo, -65504.0f, 65504.0f)));
  const float d = fp16_at_least(std::min(std::max(0.0f, hi - m) / static_cast<float>(max_q), 65504.0f));
  *d16 = float_to_fp16(d);
  *m16 = float_to_fp16(m);
  for (int e = 0; e < 32; ++e) {
    const int q = d > 0 ? static_cast<int>(std::lround((x[e] - m) / d)) : 0;
    v[e] = static_cast<uint8_t>(std::clamp(q, 0, max_q));
  }
}

void pack_low_nibbles(const uint8_t* v, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((v[j] & 15) | (v[j + 16] & 15) << 4);
}

void pack_high_bits(const uint8_t* v, uint8_t* qh) {
  uint32_t high = 0;
  for (int e = 0; e < 32; ++e) high |= static_cast<uint32_t>(v[e] >> 4) << e;
  std::memcpy(qh, &high, 4);
}

}  // namespace

void dequantize_row_q4_1(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("q4_1", n, kQ4_1BlockSize);
  uint8_t v[32];
  for (int64_t i = 0; i < n / 32; ++i) {
    const auto b = load_block<BlockQ4_1>(row, i);
    unpack_q4_1_values(b.qs, v);
    dequantize_with_min(fp16_to_float(b.d), fp16_to_float(b.m), v, dst + 32 * i);
  }
}

void dequantize_row_q5_0(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("q5_0", n, kQ4_1BlockSize);
  uint8_t v[32];
  for (int64_t i = 0; i < n / 32; ++i) {
    const auto b = load_block<BlockQ5_0>(row, i);
    unpack_q5_values(b.qs, b.qh, v);
    const float d = fp16_to_float(b.d);
    for (int e = 0; e < 32; ++e) dst[32 * i + e] = d * static_cast<float>(v[e] - 16);
  }
}

void dequantize_row_q5_1(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("q5_1", n, kQ4_1BlockSize);
  uint8_t v[32];
  for (int64_t i = 0; i < n / 32; ++i) {
    const auto b = load_block<BlockQ5_1>(row, i);
    unpack_q5_values(b.qs, b.qh, v);
    dequantize_with_min(fp16_to_float(b.d), fp16_to_float(b.m), v, dst + 32 * i);
  }
}

void quantize_row_q4_1(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q4_1", n, kQ4_1BlockSize);
  uint8_t v[32];
  for (int64_t i = 0; i < n / 32; ++i) {
    BlockQ4_1 b{};
    quantize_with_min(src + 32 * i, 15, &b.d, &b.m, v);
    pack_low_nibbles(v, b.qs);
    store_block(row, i, b);
  }
}

void quantize_row_q5_0(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q5_0", n, kQ4_1BlockSize);
  uint8_t v[32];
  for (int64_t i = 0; i < n / 32; ++i) {
    const float* x = src + 32 * i;
    const float lo = std::min(0.0f, *std::min_element(x, x + 32)), hi = std::max(0.0f, *std::max_element(x, x + 32));
    const float d = fp16_at_least(std::min(std::max(-lo / 16.0f, hi / 15.0f), 65504.0f));
    BlockQ5_0 b{};
    b.d = float_to_fp16(d);
    for (int e = 0; e < 32; ++e) {
      const int q = d > 0 ? static_cast<int>(std::lround(x[e] / d)) : 0;
      v[e] = static_cast<uint8_t>(std::clamp(q, -16, 15) + 16);
    }
    pack_low_nibbles(v, b.qs);
    pack_high_bits(v, b.qh);
    store_block(row, i, b);
  }
}

void quantize_row_q5_1(const float* src, uint8_t* row, int64_t n) {
  check_row_length("q5_1", n, kQ4_1BlockSize);
  uint8_t v[32];
  for (int64_t i = 0; i < n / 32; ++i) {
    BlockQ5_1 b{};
    quantize_with_min(src + 32 * i, 31, &b.d, &b.m, v);
    pack_low_nibbles(v, b.qs);
    pack_high_bits(v, b.qh);
    store_block(row, i, b);
  }
}

}  // namespace lowbit
