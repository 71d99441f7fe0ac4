// Q4_1, Q5_0 and Q5_1 (ggml types 3, 6, 7), exactly llama.cpp's layouts: the
// older 32-element blocks, in "Q4_1" / "Q5_0" / "Q5_1" files and in k-quant
// mixes whose rows are not a multiple of 256 (llama.cpp then writes Q5_0 for
// Q4_K and Q5_1 for Q5_K). Element j < 16 of a block has its low 4 bits in
// the low nibble of qs[j], element j + 16 in the high nibble; Q5's bit 4 of
// element e is bit e of the little-endian 32-bit qh.
//   Q4_1  20 bytes: fp16 d, fp16 m, qs[16];          element = d * q + m, q in 0..15
//   Q5_0  22 bytes: fp16 d, qh[4], qs[16];           element = d * (q - 16), q in 0..31
//   Q5_1  24 bytes: fp16 d, fp16 m, qh[4], qs[16];   element = d * q + m, q in 0..31
// Each product rounded to float, then the sum.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ4_1BlockSize = 32;

struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24, "GGUF block sizes");

// A block's 32 values (0..15 or 0..31) from qs[16] and, for Q5, qh[4].
void unpack_q4_1_values(const uint8_t* qs, uint8_t* v);
void unpack_q5_values(const uint8_t* qs, const uint8_t* qh, uint8_t* v);

void dequantize_row_q4_1(const uint8_t* row, float* dst, int64_t n);
void dequantize_row_q5_0(const uint8_t* row, float* dst, int64_t n);
void dequantize_row_q5_1(const uint8_t* row, float* dst, int64_t n);
// Plain quantizers (not llama.cpp's; the files read the same): Q4_1 / Q5_1
// take m = the block's minimum in fp16 and d = (max - m) / 15 or 31 rounded
// up in fp16, values round((x - m) / d); Q5_0 takes d = max(-min / 16,
// max / 15) rounded up, values round(x / d) + 16. Values are clamped to range.
void quantize_row_q4_1(const float* src, uint8_t* row, int64_t n);
void quantize_row_q5_0(const float* src, uint8_t* row, int64_t n);
void quantize_row_q5_1(const float* src, uint8_t* row, int64_t n);

}  // namespace lowbit
