// Q2_K (ggml type 10), exactly llama.cpp's layout: the 2-bit k-quant that
// "Q2_K" files hold. Blocks of 256 elements, 84 bytes:
//   scales[16]  per sub-block of 16 elements: step code in the low 4 bits,
//               min code in the high 4
//   qs[64]      2-bit values: per half h (128 elements, qs + 32h) and shift
//               2j (j < 4), bits 2j..2j+1 of qs[32h + l] are element
//               128h + 32j + l (l < 32), in sub-block 8h + 2j + l / 16
//   d, dmin     fp16 scales of the step and min codes
// element = (d * (sc & 15)) * q - (dmin * (sc >> 4)), each product rounded to float.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ2_KBlockSize = 256;

struct BlockQ2_K {
  uint8_t scales[kQ2_KBlockSize / 16];  // [16] 4-bit step and min codes
  uint8_t qs[kQ2_KBlockSize / 4];       // [64] 2-bit values
  uint16_t d;                           // fp16 scale of the step codes
  uint16_t dmin;                        // fp16 scale of the min codes
};
static_assert(sizeof(BlockQ2_K) == 84, "Q2_K block is 84 bytes in GGUF");

// The block's 256 2-bit values (0..3) in element order.
void unpack_q2_k_values(const BlockQ2_K& b, uint8_t* v);

void dequantize_row_q2_K(const uint8_t* row, float* dst, int64_t n);
// A plain quantizer, not llama.cpp's weighted search (files differ from
// llama-quantize's but read the same): per sub-block of 16 the step (max -
// min') / 3 and offset -min' (min' = min(min, 0)); d and dmin the largest
// step and offset over 15, rounded up in fp16; codes sc = ceil(step / d),
// m = round(offset / dmin); values round((x + dmin m) / (d sc)) in 0..3.
void quantize_row_q2_K(const float* src, uint8_t* row, int64_t n);

// Q2_K against int8 activations (quantize_activations_q8k in q6_k.h: per 256
// one float scale dx), as llama.cpp pairs Q2_K with Q8_K. Per block, exactly in
// int32 (|I| <= 16 x 15 x 16 x 3 x 128, |M| <= 16 x 15 x 16 x 128):
//   I = sum_j (scales[j] & 15) * sum over sub-block j (16 values) of v * q
//   M = sum_j (scales[j] >> 4) * sum over sub-block j of q
// then in float, block after block: y += float(I) * (d * dx) - float(M) * (dmin * dx)
// (k_block_term in quant/q4_k.h, dot_q4_k_q8k's arithmetic).
float dot_q2_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n);

}  // namespace lowbit
