// Q1_0 (ggml type 41), exactly llama.cpp's layout: blocks of 128 elements, each
// an fp16 scale d followed by 16 bytes of sign bits. Element j of a block is bit
// j % 8 of qs[j / 8] (least significant first); a set bit means +d, a clear bit -d.
// There is no zero: 1-bit models (ParetoQ, PrismML's Bonsai) are +-1 times a scale.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ1_0BlockSize = 128;

struct BlockQ1_0 {
  uint16_t d;                     // fp16 scale
  uint8_t qs[kQ1_0BlockSize / 8];  // [16] sign bits, element 8i + p at bit p of qs[i]
};
static_assert(sizeof(BlockQ1_0) == 18, "Q1_0 block is 18 bytes in GGUF");

// Bit (0 or 1) of element j (0..127) of a block.
inline int q1_0_bit(const BlockQ1_0& b, int64_t j) { return (b.qs[j / 8] >> (j % 8)) & 1; }

void dequantize_row_q1_0(const uint8_t* row, float* dst, int64_t n);
// llama.cpp's quantize_row_q1_0_ref: d = (sum of |x| over the block, summed in
// float in element order) / 128; bit = x >= 0 (so -0.0 and +0.0 both give +d).
void quantize_row_q1_0(const float* src, uint8_t* row, int64_t n);
// sum over blocks, in order, of float(d) * float(sum_j (bit_j ? q[j] : -q[j])).
float dot_i8_q1_0(const uint8_t* row, const int8_t* q, int64_t n);

}  // namespace lowbit
