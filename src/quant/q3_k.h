// Q3_K (ggml type 11), exactly llama.cpp's layout: the 3-bit k-quant that
// "Q3_K_S/M/L" files hold, and Q2_K files beside their Q2_K matrices.
// Blocks of 256 elements, 110 bytes:
//   hmask[32]   bit 2 of each value: bit 4h + j of hmask[l] for element
//               128h + 32j + l (h < 2, j < 4, l < 32), set meaning "no -4"
//   qs[64]      bits 0-1: bits 2j..2j+1 of qs[32h + l], as Q2_K's qs
//   scales[12]  sixteen 6-bit codes c[s], one per sub-block of 16 elements
//               (element e is in sub-block e / 16):
//                 low 4 bits of c[s]: s < 8 the low nibble of scales[s],
//                   s >= 8 the high nibble of scales[s - 8]
//                 high 2 bits of c[s]: bits 2 (s / 4) .. 2 (s / 4) + 1 of
//                   scales[8 + s % 4]
//   d           fp16 super-block scale
// element = (d * (c[s] - 32)) * value, value = (qs bits) - (hmask bit ? 0 : 4)
// in -4..3, the product rounded to float.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ3_KBlockSize = 256;

struct BlockQ3_K {
  uint8_t hmask[kQ3_KBlockSize / 8];  // [32]
  uint8_t qs[kQ3_KBlockSize / 4];     // [64]
  uint8_t scales[12];                 // sixteen 6-bit codes, packed as above
  uint16_t d;                         // fp16
};
static_assert(sizeof(BlockQ3_K) == 110, "Q3_K block is 110 bytes in GGUF");

// The sixteen 6-bit scale codes (0..63; the scale is code - 32).
void q3_k_scale_codes(const uint8_t* scales, int* codes /* [16] */);
// The block's 256 values (-4..3) in element order.
void unpack_q3_k_values(const BlockQ3_K& b, int8_t* v);

void dequantize_row_q3_K(const uint8_t* row, float* dst, int64_t n);
// A plain quantizer, not llama.cpp's weighted search (files differ from
// llama-quantize's but read the same): per sub-block of 16 the step
// max(-min / 4, max / 3); d the largest step over 31, rounded up in fp16;
// codes 32 + ceil(step / d); values round(x / (d (code - 32))) in -4..3.
void quantize_row_q3_K(const float* src, uint8_t* row, int64_t n);

// Q3_K against int8 activations (quantize_activations_q8k in q6_k.h: per 256
// one float scale dx), as llama.cpp pairs Q3_K with Q8_K. Per block, exactly in
// int32 (|I| <= 16 x 32 x 16 x 4 x 128):
//   I = sum_s (c[s] - 32) * sum over sub-block s (16 values) of v * q
// then in float, block after block: y += float(I) * (d * dx) (dot_q6_k_q8k's
// arithmetic: Q3_K, like Q6_K, has signed scales and no mins).
float dot_q3_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n);

}  // namespace lowbit
