#include "bench_weights.h"

#include <cstring>

#include "core/half.h"
#include "core/rng.h"
#include "quant/i2s.h"

namespace lowbit::tools {

// A third each of -1, 0, +1.
std::vector<uint8_t> random_i2s(int64_t rows, int64_t cols, Rng& rng) {
  std::vector<int8_t> t(static_cast<size_t>(rows * cols));
  for (auto& v : t) v = static_cast<int8_t>(static_cast<int>(rng.below(3)) - 1);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * cols / 4 + kI2STrailerBytes));
  pack_i2s(t.data(), rows * cols, 1.0f, bytes.data());
  return bytes;
}

std::vector<uint8_t> random_i2s(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  return random_i2s(rows, cols, rng);
}

// Random bytes, then the scales: the block's first two bytes, and Q4_K and
// Q5_K's dmin or Q4_1 and Q5_1's m after them; Q3_K's and Q6_K's d, Q2_K's d
// and dmin at the block's end.
std::vector<uint8_t> random_blocks(GgmlType type, int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> bytes(static_cast<size_t>(ggml_tensor_bytes(type, rows * cols, cols)));
  for (auto& b : bytes) b = static_cast<uint8_t>(rng.next_u32());
  const uint16_t d = float_to_fp16(0.01f);
  const bool has_dmin = type == GgmlType::Q4_K || type == GgmlType::Q5_K || type == GgmlType::Q2_K ||
                        type == GgmlType::Q4_1 || type == GgmlType::Q5_1;
  const size_t block_bytes = static_cast<size_t>(ggml_type_info(type).block_bytes);
  const size_t d_at = type == GgmlType::Q6_K || type == GgmlType::Q3_K ? block_bytes - 2
                      : type == GgmlType::Q2_K                         ? block_bytes - 4
                                                                        : 0;
  for (size_t off = 0; off < bytes.size(); off += block_bytes) {
    std::memcpy(&bytes[off + d_at], &d, 2);
    if (has_dmin) std::memcpy(&bytes[off + d_at + 2], &d, 2);
  }
  return bytes;
}

std::vector<uint8_t> random_f16(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * cols * 2));
  for (size_t i = 0; i < bytes.size(); i += 2) {
    const uint16_t h = float_to_fp16(0.02f * static_cast<float>(rng.normal()));
    std::memcpy(&bytes[i], &h, 2);
  }
  return bytes;
}

}  // namespace lowbit::tools
