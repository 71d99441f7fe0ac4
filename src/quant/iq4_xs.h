// IQ4_XS (ggml type 23), exactly llama.cpp's layout: IQ4_NL's codebook in
// super-blocks of 256 with a 6-bit scale per 32, 4.25 bits a weight ("IQ4_XS"
// files). 136 bytes:
//   d          fp16 super-block scale
//   scales_h   uint16: bits 2j..2j+1 are the top 2 bits of sub-block j's code
//   scales_l[4]  the low 4 bits of sub-block j's code in the low (j even) or
//              high (j odd) nibble of scales_l[j / 2]
//   qs[128]    per sub-block j (16 bytes at qs + 16j): byte l holds element
//              32j + l's index in its low nibble and element 32j + l + 16's
//              in its high one (IQ4_NL's order)
// element = (d * (code_j - 32)) * kIq4NlValues[index], the product rounded to float.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kIq4XsBlockSize = 256;

struct BlockIq4Xs {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[4];
  uint8_t qs[kIq4XsBlockSize / 2];  // [128]
};
static_assert(sizeof(BlockIq4Xs) == 136, "IQ4_XS block is 136 bytes in GGUF");

// Sub-block j's (0..7) 6-bit scale code (the scale is code - 32).
inline int iq4_xs_scale_code(const BlockIq4Xs& b, int j) {
  return ((b.scales_l[j / 2] >> (4 * (j % 2))) & 15) | ((b.scales_h >> (2 * j)) & 3) << 4;
}

void dequantize_row_iq4_xs(const uint8_t* row, float* dst, int64_t n);
// A plain quantizer (not llama.cpp's search; the files read the same): per
// sub-block the scale that puts its largest-magnitude element on the
// codebook's -127; d the largest such |scale| over 32 rounded up in fp16;
// codes 32 + round(scale / d); indices nearest to x / (d (code - 32)).
void quantize_row_iq4_xs(const float* src, uint8_t* row, int64_t n);

// IQ4_XS against int8 activations (quantize_activations_q8k in q6_k.h: per
// 256 one float scale dx), as llama.cpp pairs IQ4_XS with Q8_K. Per block,
// exactly in int32 (|I| <= 8 x 32 x 32 x 127 x 128):
//   I = sum_j (code_j - 32) * sum over sub-block j (32 values) of kIq4NlValues[index] * q
// then in float, block after block: y += float(I) * (d * dx) (dot_q6_k_q8k's
// arithmetic: signed scales, no mins).
float dot_iq4_xs_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n);

}  // namespace lowbit
