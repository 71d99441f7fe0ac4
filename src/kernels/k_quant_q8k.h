// The k-quant x int8-activation kernel families, as llama.cpp and bitnet.cpp
// compute k-quants (Q6_K x Q8_K, Q4_K x Q8_K): activations quantized to int8
// per block of 256 (quant/q6_k.h's quantize_activations_q8k), integer dot
// products per block, then one float scale. Each is exactly its quant/ scalar
// reference (dot_q6_k_q8k, dot_q4_k_q8k, ...), which approximates the float k-quant
// family by the activations' rounding (`lowbit verify` reports by how much).
// Chosen only when asked for (--kernel q6_k_q8k / q4_k_q8k / ..., or q8k for
// them all): auto never picks an approximation. The layout is the file's (but
// IQ4_XS's), copied at load onto huge pages.
//   q6_k_q8k: Q6_K rows (output heads, embeddings), vpdpbusd (AVX-512 VNNI) or
//             vpmaddubsw (AVX2).
//   q4_k_q8k: Q4_K rows (most "Q4_K_M" matrices), vpmaddubsw (AVX2).
//   q5_k_q8k: Q5_K rows (most "Q5_K_M" matrices), the same with the fifth bit.
//   q2_k_q8k: Q2_K rows (most "Q2_K" matrices), vpmaddubsw (AVX2).
//   q3_k_q8k: Q3_K rows (most "Q3_K_S/M/L" matrices), vpmaddubsw (AVX2).
//   iq4_xs_q8k: IQ4_XS rows, codebook by vpshufb, vpmaddubsw (AVX2); the
//             only one whose copy is not the file's layout (iq4_xs_pair_layout).
#pragma once

#include <cstdint>

#include "kernels/dispatch.h"

namespace lowbit {

KernelFamily q6_k_q8k_kernel_family();
KernelFamily q4_k_q8k_kernel_family();
KernelFamily q5_k_q8k_kernel_family();
KernelFamily q2_k_q8k_kernel_family();
KernelFamily q3_k_q8k_kernel_family();
KernelFamily iq4_xs_q8k_kernel_family();

// Most tokens an AVX2 row kernel takes at once (the *_tokens_avx2 functions).
inline constexpr int kQ8KMaxTokens = 4;

// One row of `blocks` Q6_K blocks . q (int8, 256 per block, scales dx[block]);
// xsum32[l] = 32 * (q[4l] + ... + q[4l + 3]), for the -32 of every 6-bit value.
// Equals dot_q6_k_q8k bit for bit. Only after run-time CPU detection (AVX-512 VNNI).
float q6_k_q8k_row_avx512(const uint8_t* row, int64_t blocks, const int8_t* q, const int32_t* xsum32,
                          const float* dx);

// AVX2 rows for 1..kQ8KMaxTokens tokens at once (activations q[t], sums[t],
// dx[t]): y[t], each bitwise the scalar reference's dot of the row with token
// t, the row's values unpacked once for all the tokens.
//   Q4_K (dot_q4_k_q8k) and Q5_K (dot_q5_k_q8k): sums[t][j] = q[32j] + ... +
//     q[32j + 31], for the sub-block mins.
//   Q6_K (dot_q6_k_q8k): sums[t][j] = q[16j] + ... + q[16j + 15], for the -32
//     of every value.
//   Q2_K (dot_q2_k_q8k): sums[t][j] = q[16j] + ... + q[16j + 15], for the
//     sub-block mins.
//   Q3_K (dot_q3_k_q8k): sums[t][j] = 4 * (q[16j] + ... + q[16j + 15]), for
//     the -4 of the values as unsigned.
//   IQ4_XS (dot_iq4_xs_q8k), rows in iq4_xs_pair_layout: no sums (null).
void q2_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* sums, const float* const* dx, float* y);
void q3_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* sums, const float* const* dx, float* y);
void iq4_xs_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                            const int32_t* const* sums, const float* const* dx, float* y);
void q4_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* sums, const float* const* dx, float* y);
void q5_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* sums, const float* const* dx, float* y);
void q6_k_q8k_tokens_avx2(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q,
                          const int32_t* const* sums, const float* const* dx, float* y);

// IQ4_XS blocks (`blocks` in a row, in place) from the file's layout (sub-block
// j's 16 bytes hold its elements l and l + 16 in the low and high nibbles of
// byte l) to iq4_xs_q8k_tokens_avx2's: byte i of the 32 at qs + 32p holds
// element 64p + i's index in its low nibble and 64p + 32 + i's in its high.
// d and the scales stay where they are.
void iq4_xs_pair_layout(uint8_t* row, int64_t blocks);

}  // namespace lowbit
