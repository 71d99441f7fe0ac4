// Kernel families (dispatch.h) for weights used with float activations,
// accumulated in float, with AVX-512 or AVX2 + F16C: output heads and
// embeddings (BitNet 2B-4T's F16 head is 656 MB of a token's 1.18 GB), float
// models and llama.cpp's k-quants. The layout is the file's (rows of k
// values), copied at load into memory the kernel owns (huge pages); F16 on
// Intel's AVX-512 is repacked into row panels instead (f16_panels.h).
//   f16:  F16, BF16 and F32 rows
//   q6_k: Q6_K rows (6.56 bits a weight)
//   q4_k: Q4_K and Q5_K rows (4.5 / 5.5 bits a weight: "Q4_K_M", "Q5_K_M" files)
//   q3_k: Q3_K rows (3.44 bits a weight: "Q3_K_S/M/L" files)
//   q2_k: Q2_K rows (2.63 bits a weight: "Q2_K" files)
//   iq4_xs: IQ4_XS rows (4.25 bits a weight: IQ4_NL's codebook, a 6-bit scale per 32)
//   q4_1: Q4_1, Q5_0, Q5_1 rows (5, 5.5, 6 bits a weight: older files, and
//         k-quant mixes whose rows are not a multiple of 256)
// The k-quant families sum values times activations per sub-block and scale
// the sums (one to four tokens), or dequantize a tile of rows exactly and run
// the F32 tile (more tokens): docs/kernels.md "The k-quant families".
#pragma once

#include "kernels/dispatch.h"

namespace lowbit {

KernelFamily float_kernel_family();
KernelFamily q6_k_kernel_family();
KernelFamily q4_k_kernel_family();
KernelFamily q2_k_kernel_family();
KernelFamily q3_k_kernel_family();
KernelFamily q4_1_kernel_family();
KernelFamily iq4_xs_kernel_family();

// The order in which these families sum many tokens of a weight type on a
// CPU: from from_tokens tokens on, each (row, token) as k_group FMA chains
// over k in order (k_group 2: the even values of k and the odd ones), from 0,
// added at the end (docs/kernels.md "Many tokens in panels"; F16 with
// AVX-512: one chain from one token, "F16 row panels"). {0, 0}: no float kernels.
struct FloatPanelOrder {
  int from_tokens;
  int k_group;
};
FloatPanelOrder float_panel_order(const CpuFeatures& cpu, GgmlType type);

}  // namespace lowbit
