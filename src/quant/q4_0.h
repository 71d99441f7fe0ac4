// Q4_0 (ggml type 2), exactly llama.cpp's layout: blocks of 32 elements, each
// an fp16 scale d followed by 16 bytes; byte j holds element j in its low nibble
// and element j + 16 in its high nibble; element = d * (nibble - 8).
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ4_0BlockSize = 32;

struct BlockQ4_0 {
  uint16_t d;                      // fp16 scale
  uint8_t qs[kQ4_0BlockSize / 2];  // [16] low nibble: element j, high nibble: element j + 16
};
static_assert(sizeof(BlockQ4_0) == 18, "Q4_0 block is 18 bytes in GGUF");

// The block's 32 values (nibble - 8) in element order.
void unpack_q4_0_block(const BlockQ4_0& b, int8_t* v);

void dequantize_row_q4_0(const uint8_t* row, float* dst, int64_t n);
// llama.cpp's quantize_row_q4_0_ref: m = the element of largest magnitude (first
// one on ties), d = m / -8, nibble = min(15, trunc(x / d + 8.5)); so m itself
// maps to nibble 0 (value -8) and the scale's sign carries m's sign.
void quantize_row_q4_0(const float* src, uint8_t* row, int64_t n);
// sum over blocks, in order, of float(d) * float(sum_j (nibble_j - 8) * q[j]).
float dot_i8_q4_0(const uint8_t* row, const int8_t* q, int64_t n);

}  // namespace lowbit
