// TQ1_0 (ggml type 34), exactly llama.cpp's layout: blocks of 256 ternary
// elements, 54 bytes: qs[48], qh[4], then an fp16 scale d.
//
// Each packed byte holds base-3 digits ("trits", value + 1 in {0, 1, 2}) as a
// fixed-point fraction: for trits t0..t4 (t0 most significant) the byte is
// ceil((t0*81 + t1*27 + t2*9 + t3*3 + t4) * 256 / 243). Trit k is read back
// with the top-bits trick: ((uint8_t)(byte * 3^k) * 3) >> 8.
// Where the trits of a block go (element e, trit k of the byte):
//   qs[m],      m < 32: 5 trits, elements k*32 + m           (elements 0..159)
//   qs[32 + m], m < 16: 5 trits, elements 160 + k*16 + m     (elements 160..239)
//   qh[j],      j < 4:  4 trits, elements 240 + k*4 + j      (elements 240..255),
//                       the fifth (least significant) trit is 0.
// Value = (trit - 1) * d.
#pragma once

#include <cstdint>

namespace lowbit {

constexpr int64_t kTQ1_0BlockSize = 256;

struct BlockTQ1_0 {
  uint8_t qs[48];  // 5 trits per byte, elements 0..239
  uint8_t qh[4];   // 4 trits per byte, elements 240..255
  uint16_t d;      // fp16 scale
};
static_assert(sizeof(BlockTQ1_0) == 54, "TQ1_0 block is 54 bytes in GGUF");

// The block's 256 values (trit - 1) in element order.
void unpack_tq1_0_block(const BlockTQ1_0& b, int8_t* v);

void dequantize_row_tq1_0(const uint8_t* row, float* dst, int64_t n);
// llama.cpp's quantize_row_tq1_0_ref: d = max|x| of the block, trit =
// lroundf(x / d) + 1 (half away from zero). Exact for inputs in {-d, 0, +d}.
void quantize_row_tq1_0(const float* src, uint8_t* row, int64_t n);
// sum over blocks, in order, of float(d) * float(sum_e (trit_e - 1) * q[e]).
float dot_i8_tq1_0(const uint8_t* row, const int8_t* q, int64_t n);

}  // namespace lowbit
