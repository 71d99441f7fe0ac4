// Q2_0 (ggml type 42), exactly llama.cpp's layout: blocks of 64 elements, each
// an fp16 scale d followed by 16 bytes of 2-bit codes. Element j of a block is
// code (qs[j / 4] >> (2 * (j % 4))) & 3, least significant pair first, and its
// value is (code - 1) * d: codes 0, 1, 2, 3 mean -d, 0, +d, +2d. Ternary models
// (PrismML's Bonsai files) use codes 0..2; code 3 is legal and must be honoured.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ2_0BlockSize = 64;

struct BlockQ2_0 {
  uint16_t d;                     // fp16 scale
  uint8_t qs[kQ2_0BlockSize / 4];  // [16] four 2-bit codes per byte, element 4i + p at bits 2p..2p+1
};
static_assert(sizeof(BlockQ2_0) == 18, "Q2_0 block is 18 bytes in GGUF");

// Code (0..3) of element j (0..63) of a block.
inline int q2_0_code(const BlockQ2_0& b, int64_t j) { return (b.qs[j / 4] >> (2 * (j % 4))) & 3; }

void dequantize_row_q2_0(const uint8_t* row, float* dst, int64_t n);
// llama.cpp's quantize_row_q2_0_ref: d = max|x| of the block; code =
// clamp(roundf(x / d) + 1, 0, 3) computed with the float d (1 / d as a float
// reciprocal) before d is stored as fp16.
void quantize_row_q2_0(const float* src, uint8_t* row, int64_t n);
// sum over blocks, in order, of float(d) * float(sum_j (code_j - 1) * q[j]).
float dot_i8_q2_0(const uint8_t* row, const int8_t* q, int64_t n);

}  // namespace lowbit
