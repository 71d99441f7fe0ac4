// Q4_K (ggml type 12), exactly llama.cpp's layout: the 4-bit k-quant that
// most "Q4_K_M" files hold. Blocks of 256 elements, 144 bytes:
//   d, dmin   fp16 super-block scales
//   scales[12]  eight 6-bit sub-block scales sc[j] and mins m[j]:
//     j < 4:  sc = scales[j] & 63,  m = scales[j + 4] & 63
//     j >= 4: sc = (scales[j + 4] & 15) | (scales[j - 4] >> 6) << 4,
//             m  = (scales[j + 4] >> 4) | (scales[j] >> 6) << 4
//   qs[128]   per 64 elements p (32 bytes at qs + 32p): the low nibbles are
//             sub-block 2p's 32 values, the high nibbles sub-block 2p + 1's
// element = (d * sc[j]) * q - (dmin * m[j]), each product rounded to float.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ4_KBlockSize = 256;

struct BlockQ4_K {
  uint16_t d;                          // fp16 scale of the sub-block scales
  uint16_t dmin;                       // fp16 scale of the sub-block mins
  uint8_t scales[12];                  // 6-bit sc[8] and m[8], packed as above
  uint8_t qs[kQ4_KBlockSize / 2];      // [128] 4-bit values
};
static_assert(sizeof(BlockQ4_K) == 144, "Q4_K block is 144 bytes in GGUF");

// Sub-block j's (0..7) 6-bit scale and min (Q4_K's and Q5_K's scales[12]).
inline void q4_k_scale_min(const uint8_t* scales, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *m = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 15) | (scales[j - 4] >> 6) << 4;
    *m = (scales[j + 4] >> 4) | (scales[j] >> 6) << 4;
  }
}

// The plain quantizer of Q4_K and Q5_K for one block of 256: per sub-block
// of 32 the step (max - min') / max_q and offset -min' (min' = min(min, 0));
// d and dmin are the largest step and offset over 63, rounded up in fp16
// (at most fp16's largest finite value); sc[j] = ceil(step_j / d),
// m[j] = round(offset_j / dmin), values round((x + dmin m[j]) / (d sc[j]))
// in 0..max_q. Writes d, dmin, the packed scales[12] and q[256].
void quantize_k_block(const float* x, int max_q, uint16_t* d, uint16_t* dmin, uint8_t* scales, uint8_t* q);
// The block's 256 4-bit values (0..15) in element order.
void unpack_q4_k_values(const BlockQ4_K& b, uint8_t* v);

void dequantize_row_q4_K(const uint8_t* row, float* dst, int64_t n);
// One Q4_K or Q5_K block's 256 elements from its d, dmin, scales[12] and
// unpacked values (0..15 or 0..31): the dequantization both formats share.
void dequantize_k_block(uint16_t d, uint16_t dmin, const uint8_t* scales, const uint8_t* v, float* dst);
// quantize_k_block with values 0..15: a plain quantizer, not llama.cpp's
// weighted search (files differ from llama-quantize's but read the same).
void quantize_row_q4_K(const float* src, uint8_t* row, int64_t n);

// Q4_K against int8 activations (quantize_activations_q8k in q6_k.h: per 256
// one float scale dx), as llama.cpp pairs Q4_K with Q8_K. Per block, exactly in
// int32 (|I| <= 8 x 63 x 32 x 15 x 127, |M| <= 8 x 63 x 32 x 127):
//   I = sum_j sc[j] * sum over sub-block j of v * q
//   M = sum_j m[j] * sum over sub-block j of q
// then in float, block after block: y += float(I) * (d * dx) - float(M) * (dmin * dx).
float dot_q4_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n);
// One Q4_K or Q5_K block's term of that sum, from its d, dmin, scales[12] and
// unpacked values (0..15 or 0..31): float(I) * (d * dx) - float(M) * (dmin * dx).
float k_block_dot_q8k(uint16_t d, uint16_t dmin, const uint8_t* scales, const uint8_t* v, const int8_t* qb, float dx);
// The float step of every k-quant x Q8_K block with a min (Q2_K, Q4_K, Q5_K),
// from its exact integer sums I and M: float(I) * (d * dx) - float(M) * (dmin * dx).
float k_block_term(int32_t dot, int32_t offset, uint16_t d, uint16_t dmin, float dx);

}  // namespace lowbit
