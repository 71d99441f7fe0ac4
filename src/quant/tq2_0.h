// TQ2_0 (ggml type 35), exactly llama.cpp's layout: blocks of 256 ternary
// elements, 66 bytes: qs[64] of 2-bit codes, then an fp16 scale d.
// Element e of a block is code (qs[b] >> 2*l) & 3 with
//   b = (e / 128) * 32 + e % 32,   l = (e % 128) / 32,
// i.e. each half-block of 128 elements is 32 bytes whose bit pairs 0-1, 2-3,
// 4-5, 6-7 hold elements 0-31, 32-63, 64-95, 96-127 of that half.
// Value = (code - 1) * d: codes 0, 1, 2 are -1, 0, +1 (code 3 would read as +2,
// as in llama.cpp; its quantizer never writes it).
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kTQ2_0BlockSize = 256;

struct BlockTQ2_0 {
  uint8_t qs[kTQ2_0BlockSize / 4];  // [64] 2-bit codes, order above
  uint16_t d;                       // fp16 scale
};
static_assert(sizeof(BlockTQ2_0) == 66, "TQ2_0 block is 66 bytes in GGUF");

// The block's 256 values (code - 1) in element order.
void unpack_tq2_0_block(const BlockTQ2_0& b, int8_t* v);

void dequantize_row_tq2_0(const uint8_t* row, float* dst, int64_t n);
// llama.cpp's quantize_row_tq2_0_ref: d = max|x| of the block, code =
// lroundf(x / d) + 1 (half away from zero). Exact for inputs in {-d, 0, +d}.
void quantize_row_tq2_0(const float* src, uint8_t* row, int64_t n);
// sum over blocks, in order, of float(d) * float(sum_e (code_e - 1) * q[e]).
float dot_i8_tq2_0(const uint8_t* row, const int8_t* q, int64_t n);

}  // namespace lowbit
