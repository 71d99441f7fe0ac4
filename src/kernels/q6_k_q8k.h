// The "q6_k_q8k" kernel family: Q6_K rows (output heads, embeddings) against
// activations quantized to int8 per block of 256, as llama.cpp and bitnet.cpp
// compute a Q6_K head (Q6_K x Q8_K). Integer dot products with vpdpbusd
// (AVX-512 VNNI); exactly quant/q6_k.h's dot_q6_k_q8k, which approximates the
// float "q6_k" family by the activations' rounding (`lowbit verify` reports by
// how much). Chosen only when asked for (--kernel q6_k_q8k): auto never picks an
// approximation. The layout is the file's, copied at load onto huge pages.
#pragma once

#include <cstdint>

#include "kernels/dispatch.h"

namespace lowbit {

KernelFamily q6_k_q8k_kernel_family();

// One row of `blocks` Q6_K blocks . q (int8, 256 per block, scales dx[block]);
// xsum32[l] = 32 * (q[4l] + ... + q[4l + 3]), for the -32 of every 6-bit value.
// Equals dot_q6_k_q8k bit for bit. Only after run-time CPU detection (AVX-512 VNNI).
float q6_k_q8k_row_avx512(const uint8_t* row, int64_t blocks, const int8_t* q, const int32_t* xsum32,
                          const float* dx);

}  // namespace lowbit
