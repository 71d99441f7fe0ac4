// Helpers shared by the src/quant tests: random data with fixed seeds, and
// little-endian reads for decoding layouts straight from the bytes.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/half.h"
#include "core/rng.h"

namespace lowbit::test {

inline std::vector<float> random_normal(Rng& rng, int64_t n, float sigma = 1.0f) {
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = sigma * static_cast<float>(rng.normal());
  return x;
}

inline std::vector<uint8_t> random_bytes(Rng& rng, int64_t n) {
  std::vector<uint8_t> b(static_cast<size_t>(n));
  for (auto& v : b) v = static_cast<uint8_t>(rng.next_u32());
  return b;
}

inline std::vector<int8_t> random_int8(Rng& rng, int64_t n) {
  std::vector<int8_t> q(static_cast<size_t>(n));
  for (auto& v : q) v = static_cast<int8_t>(static_cast<int>(rng.below(256)) - 128);
  return q;
}

inline std::vector<int8_t> random_ternary(Rng& rng, int64_t n) {
  std::vector<int8_t> t(static_cast<size_t>(n));
  for (auto& v : t) v = static_cast<int8_t>(static_cast<int>(rng.below(3)) - 1);
  return t;
}

inline uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline float le_fp16(const uint8_t* p) { return fp16_to_float(le16(p)); }
inline void put_le16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// A random finite fp16 scale between 2^-14 and 2^4 with a random sign.
inline uint16_t random_fp16_scale(Rng& rng) {
  const float mag = static_cast<float>(std::ldexp(1.0 + rng.uniform(), static_cast<int>(rng.below(18)) - 14));
  return float_to_fp16(rng.below(2) ? mag : -mag);
}

// `blocks` blocks of block_bytes random bytes, each led by a random fp16 scale
// (the Q4_0 / Q8_0 / Q1_0 / Q2_0 shape: d first, then the values).
inline std::vector<uint8_t> random_scale_first_blocks(Rng& rng, int64_t blocks, int64_t block_bytes) {
  auto row = random_bytes(rng, blocks * block_bytes);
  for (int64_t b = 0; b < blocks; ++b) put_le16(&row[static_cast<size_t>(b * block_bytes)], random_fp16_scale(rng));
  return row;
}

// The scale extremes every block format must carry: largest finite fp16,
// smallest normal, smallest subnormal, zero.
constexpr uint16_t kExtremeFp16Scales[] = {0x7bff, 0x0400, 0x0001, 0x0000};

}  // namespace lowbit::test
