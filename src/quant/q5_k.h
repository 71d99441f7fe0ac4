// Q5_K (ggml type 13), exactly llama.cpp's layout: Q4_K's with a fifth bit
// per value ("Q5_K_M" files hold it). Blocks of 256 elements, 176 bytes:
//   d, dmin, scales[12]  as Q4_K's (quant/q4_k.h): 6-bit sc[j] and m[j] per sub-block of 32
//   qh[32]               element l of sub-block j has its bit 4 at bit j of qh[l]
//   qs[128]              bits 0-3 as Q4_K's qs
// element = (d * sc[j]) * q - (dmin * m[j]), q in 0..31, each product rounded to float.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ5_KBlockSize = 256;

struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQ5_KBlockSize / 8];  // [32]
  uint8_t qs[kQ5_KBlockSize / 2];  // [128]
};
static_assert(sizeof(BlockQ5_K) == 176, "Q5_K block is 176 bytes in GGUF");

// The block's 256 5-bit values (0..31) in element order.
void unpack_q5_k_values(const BlockQ5_K& b, uint8_t* v);

void dequantize_row_q5_K(const uint8_t* row, float* dst, int64_t n);
// quantize_k_block (quant/q4_k.h) with values 0..31: a plain quantizer, not
// llama.cpp's weighted search.
void quantize_row_q5_K(const float* src, uint8_t* row, int64_t n);

// Q5_K against int8 activations: dot_q4_k_q8k's sums (quant/q4_k.h) with the
// 5-bit values (|I| <= 8 x 63 x 32 x 31 x 127).
float dot_q5_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n);

}  // namespace lowbit
