// Q8_0 (ggml type 8), exactly llama.cpp's layout: blocks of 32 elements, each
// an fp16 scale d followed by 32 int8 values; element j = d * qs[j].
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ8_0BlockSize = 32;

struct BlockQ8_0 {
  uint16_t d;                 // fp16 scale
  int8_t qs[kQ8_0BlockSize];  // [32] element j of the block
};
static_assert(sizeof(BlockQ8_0) == 34, "Q8_0 block is 34 bytes in GGUF");

void dequantize_row_q8_0(const uint8_t* row, float* dst, int64_t n);
// llama.cpp's quantize_row_q8_0_ref: d = max|x| / 127, qs = roundf(x / d)
// (half away from zero), computed with the float d before it is stored as fp16.
void quantize_row_q8_0(const float* src, uint8_t* row, int64_t n);
// sum over blocks, in order, of float(d) * float(sum_j qs[j] * q[j]).
float dot_i8_q8_0(const uint8_t* row, const int8_t* q, int64_t n);

}  // namespace lowbit
