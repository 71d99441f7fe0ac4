// The "f16" kernel family (dispatch.h): F16, BF16 and F32 weights times float
// activations, accumulated in float, with AVX-512 or AVX2 + F16C. For output
// heads and embeddings stored as F16 (BitNet 2B-4T's 656 MB head is most of a
// token's weight bytes) and float models. The weights are read where the file
// has them: their layout is already the kernel's (rows of k values).
#pragma once

#include "kernels/dispatch.h"

namespace lowbit {

KernelFamily float_kernel_family();

}  // namespace lowbit
