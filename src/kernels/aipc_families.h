// The AI-PC up-convert-and-compute kernel families (docs/kernels.md):
//   int2: 2-bit codes with any 4 int8 levels and an fp16 scale per group
//         (Q2_0, TQ2_0, I2_S), VNNI4-interleaved, vpshufb up-convert
//   int1: 1-bit +-1 weights with an fp16 scale per group (Q1_0)
//   int1_lut: the same weights by 4-bit table lookup (int1_lut.h)
//   q4_0: Q4_0 row-interleaved two k per byte (the Arm paper's interleaved groups)
//   iq4_nl: IQ4_NL the same way, its codebook looked up by vpshufb
//   q8_0: Q8_0 row-interleaved, the int8 baseline of the paper's GEMV figures
#pragma once

#include <array>
#include <memory>
#include <string>

#include "core/cpu_features.h"
#include "kernels/dispatch.h"
#include "kernels/vnni4_layout.h"
#include "kernels/vnni4_matmul.h"

namespace lowbit {

KernelFamily int2_kernel_family();
KernelFamily int1_kernel_family();
KernelFamily int1_lut_kernel_family();
KernelFamily q4_0_kernel_family();
KernelFamily iq4_nl_kernel_family();
KernelFamily q8_0_kernel_family();

// The int2 kernel for these levels and group at isa (the masking kernel for
// levels lowest + code on AVX-512 VNNI, int16 sums on plain AVX2 where the
// levels span at most kInt2Int16MaxSpan, the vpshufb one otherwise); *name gets
// its kernel name, "int2/<isa>[-linear|-int16]". nta_prefetch as vnni4_kernel's.
Vnni4Kernel int2_kernel(Vnni4Isa isa, const std::array<int8_t, 4>& levels, int64_t group, bool nta_prefetch,
                        std::string* name);

// A Q1_0 matrix's bits and block scales in a 1-bit layout (One: int1's,
// OneLookup: int1_lut's; int1_family.cpp).
Vnni4Layout pack_q1_0(const WeightView& w, Vnni4Bits bits, ThreadPool& pool);

// A Q4_0 or IQ4_NL matrix's 4-bit fields (0..15) and block scales in the
// 4-bit layout (q4_0_family.cpp).
Vnni4Layout pack_nibble_blocks(const WeightView& w, ThreadPool& pool);

// Generic 2-bit matrix: source gives each row's codes (0..3) and fp16 scales per
// group; weight = levels[code] * scale. Throws Error when the levels span more
// than the ISA can multiply exactly (255; 127 on plain AVX2) or the CPU has no AVX2.
std::unique_ptr<Matmul> make_int2_matmul(int64_t rows, int64_t cols, int64_t group,
                                         const std::array<int8_t, 4>& levels, Vnni4RowSource source,
                                         const CpuFeatures& cpu, ThreadPool& pool, float tensor_scale = 1.0f);

}  // namespace lowbit
