// Kernel families (dispatch.h) for weights used with float activations,
// accumulated in float, with AVX-512 or AVX2 + F16C: output heads and
// embeddings (BitNet 2B-4T's F16 head is 656 MB of a token's 1.18 GB) and
// float models. The layout is the file's (rows of k values), copied at load
// into memory the kernel owns (huge pages).
//   f16:  F16, BF16 and F32 rows
//   q6_k: Q6_K rows (6.56 bits a weight), unpacked and dequantized in registers
//   q4_k: Q4_K and Q5_K rows (4.5 / 5.5 bits a weight: "Q4_K_M", "Q5_K_M" files), the same way
#pragma once

#include "kernels/dispatch.h"

namespace lowbit {

KernelFamily float_kernel_family();
KernelFamily q6_k_kernel_family();
KernelFamily q4_k_kernel_family();
KernelFamily q2_k_kernel_family();
KernelFamily q3_k_kernel_family();

}  // namespace lowbit
