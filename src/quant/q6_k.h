// Q6_K (ggml type 14), exactly llama.cpp's layout (bitnet.cpp's --quant-embd
// and llama.cpp's TQ files store token_embd this way; lowbit's gen-model can
// write 6-bit heads with it).
// Blocks of 256 elements, 210 bytes: ql[128] low 4 bits, qh[64] high 2 bits,
// scales[16] int8 (one per 16 elements), fp16 d. Per half-block h (128
// elements; ql + 64h, qh + 32h, scales + 8h) and l < 32, the 6-bit values are
//   element l      : ql[l] & 15      | ((qh[l] >> 0) & 3) << 4
//   element l + 32 : ql[l + 32] & 15 | ((qh[l] >> 2) & 3) << 4
//   element l + 64 : ql[l] >> 4      | ((qh[l] >> 4) & 3) << 4
//   element l + 96 : ql[l + 32] >> 4 | ((qh[l] >> 6) & 3) << 4
// and element e of the half-block = (d * scales[e / 16]) * (value - 32), in float.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kQ6_KBlockSize = 256;

struct BlockQ6_K {
  uint8_t ql[kQ6_KBlockSize / 2];      // [128]
  uint8_t qh[kQ6_KBlockSize / 4];      // [64]
  int8_t scales[kQ6_KBlockSize / 16];  // [16]
  uint16_t d;                          // fp16 super-block scale
};
static_assert(sizeof(BlockQ6_K) == 210, "Q6_K block is 210 bytes in GGUF");

void dequantize_row_q6_K(const uint8_t* row, float* dst, int64_t n);
// A plain round-to-nearest quantizer (not llama.cpp's iterative scale search,
// so files differ from llama-quantize's but read the same): per 16 values the
// smallest step reaching both extremes (-32 and +31 steps), d = max step / 127
// rounded up to fp16, scales[j] = ceil(step_j / d), values round(x / (d *
// scales[j])). Every value is within half its sub-block's step.
void quantize_row_q6_K(const float* src, uint8_t* row, int64_t n);

// Q6_K against int8 activations, as llama.cpp and bitnet.cpp pair a Q6_K head
// with Q8_K activations: per block of 256 activations one float scale
// d = max|x| / 127 and q = nearest(x / d) (all 0, d = 0, for a block of zeros).
// The idea of ggml's Q8_K, not its exact rounding.
void quantize_activations_q8k(const float* x, int64_t n, int8_t* q, float* d /* [n / 256] */);
// Sum over blocks, in order, of float(I_b) * (d_w * d_x) with
// I_b = sum_j scales[j] * sum over sub-block j of (v - 32) * q, exact in int32
// (|I_b| <= 16 x 127 x 16 x 32 x 128).
float dot_q6_k_q8k(const uint8_t* row, const int8_t* q, const float* dx, int64_t n);

}  // namespace lowbit
