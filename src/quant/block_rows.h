// Shared plumbing of the block formats in src/quant: a row is a run of packed
// blocks at an arbitrary byte address (GGUF only aligns tensors, and I2_S or
// odd row lengths can leave a row anywhere), so blocks are copied in and out
// with memcpy rather than cast in place.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "core/half.h"

namespace lowbit {

// A row must hold a whole number of blocks, or the byte layout has no meaning.
inline void check_row_length(const char* format, int64_t n, int64_t block_size) {
  if (n < 0 || n % block_size != 0)
    fail(format, " row of ", n, " elements is not a multiple of the block size ", block_size);
}

// max |x[i]| over n values (0 for none): the scale most block quantizers start from.
inline float block_absmax(const float* x, int64_t n) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  return amax;
}

template <class Block>
Block load_block(const uint8_t* row, int64_t i) {
  Block b;
  std::memcpy(&b, row + i * static_cast<int64_t>(sizeof(Block)), sizeof(Block));
  return b;
}

template <class Block>
void store_block(uint8_t* row, int64_t i, const Block& b) {
  std::memcpy(row + i * static_cast<int64_t>(sizeof(Block)), &b, sizeof(Block));
}

// Formats whose block is one fp16 scale `d` times small integers (Q8_0, Q4_0,
// TQ1_0, TQ2_0). Unpack writes a block's integers in element order; the two
// functions below then define dequantization (integer * d) and the int8 dot
// (sum over blocks, in order, of float(d) * float(integer dot of the block)).
template <class Block, int64_t kBlockSize, void (*Unpack)(const Block&, int8_t*)>
void dequantize_scaled_blocks(const char* format, const uint8_t* row, float* dst, int64_t n) {
  check_row_length(format, n, kBlockSize);
  int8_t v[kBlockSize];
  for (int64_t i = 0; i < n / kBlockSize; ++i) {
    const auto b = load_block<Block>(row, i);
    Unpack(b, v);
    const float d = fp16_to_float(b.d);
    for (int64_t j = 0; j < kBlockSize; ++j) dst[i * kBlockSize + j] = static_cast<float>(v[j]) * d;
  }
}

template <class Block, int64_t kBlockSize, void (*Unpack)(const Block&, int8_t*)>
float dot_i8_scaled_blocks(const char* format, const uint8_t* row, const int8_t* q, int64_t n) {
  check_row_length(format, n, kBlockSize);
  int8_t v[kBlockSize];
  float acc = 0.0f;
  for (int64_t i = 0; i < n / kBlockSize; ++i) {
    const auto b = load_block<Block>(row, i);
    Unpack(b, v);
    int32_t sum = 0;
    for (int64_t j = 0; j < kBlockSize; ++j) sum += v[j] * q[i * kBlockSize + j];
    acc += fp16_to_float(b.d) * static_cast<float>(sum);
  }
  return acc;
}

}  // namespace lowbit
