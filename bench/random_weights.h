// Random weights in file formats, shared by the kernel benchmarks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "quant/i2s.h"

namespace lowbit::bench {

// An n x k I2_S tensor's bytes (trailer included) holding uniform random ternary values, scale 1.
inline std::vector<uint8_t> random_i2s(int64_t n, int64_t k, Rng& rng) {
  std::vector<int8_t> t(static_cast<size_t>(n * k));
  for (auto& v : t) v = static_cast<int8_t>(static_cast<int>(rng.below(3)) - 1);
  std::vector<uint8_t> bytes(static_cast<size_t>(n * k / 4 + kI2STrailerBytes));
  pack_i2s(t.data(), n * k, 1.0f, bytes.data());
  return bytes;
}

}  // namespace lowbit::bench
