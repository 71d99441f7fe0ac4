// Shared by the int2 / int1 / q8_0 kernel tests: random block-format tensors and
// the end-to-end comparison with the "ref" kernel at every ISA level.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/ggml_types.h"
#include "core/half.h"
#include "kernels/vnni4_matmul.h"

namespace lowbit::test {

// rows x cols of a format whose blocks start with an fp16 d (Q1_0, Q2_0, Q8_0):
// random code bytes (every code, every bit, int8 -128 included) and d = +-2^e,
// e in [-8, 1], times a random mantissa.
std::vector<uint8_t> random_scaled_blocks(GgmlType type, int64_t rows, int64_t cols, uint64_t seed);

// Makes `family` for the tensor at every ISA level this machine runs, each
// with and without AMD's code paths (vendor_amd: prefetch hints, one-token
// streams), and expects y bitwise equal to the "ref" kernel's for `tokens`
// tokens. Returns the kernel names it tested (e.g. "int2/avx2"), one per make.
std::vector<std::string> expect_family_matches_reference(const std::string& family, GgmlType type,
                                                         const std::vector<uint8_t>& data, int64_t rows,
                                                         int64_t cols, int64_t tokens, uint64_t seed);



// A several-token loop (Vnni4Spec::tokens) as a one-token kernel, for
// expect_kernels_exact: kCount copies of the task, each copy's out the same
// bits as the first's, which the caller checks.
template <void (*kTokens)(const Vnni4Task*, int), int kCount>
void tokens_as_one(const Vnni4Task& t) {
  Vnni4Task tasks[kCount];
  alignas(64) float outs[kCount][kVnni4Rows];
  for (int k = 0; k < kCount; ++k) {
    tasks[k] = t;
    if (k > 0) tasks[k].out = outs[k];
  }
  kTokens(tasks, kCount);
  for (int k = 1; k < kCount; ++k)
    for (int r = 0; r < kVnni4Rows; ++r) ASSERT_EQ(float_to_bits(outs[k][r]), float_to_bits(t.out[r])) << "token " << k;
}

// The ISA kernels of one family that this CPU runs, with their names.
struct NamedKernel {
  std::string name;
  Vnni4Kernel kernel;
};
std::vector<NamedKernel> runnable(const std::vector<std::pair<Vnni4Isa, NamedKernel>>& kernels);

// Packs random stored values (0 .. value_count-1) with random fp16 scales into
// a rows x cols layout, runs each kernel straight on activations that include
// long runs of -128 and +127, and expects bitwise the independent
//   acc += d_g * float(sum_k weight_of(value) * x)  over groups, then acc * inv.
// only_value >= 0: every weight takes that value and every activation is -128
// (the widest sums, none cancelling another), else both as above.
void expect_kernels_exact(Vnni4Bits bits, const std::vector<NamedKernel>& kernels, int value_count,
                          const std::vector<int>& weight_of, int32_t xsum_factor, const uint8_t* lut, int64_t rows,
                          int64_t cols, int64_t group, uint64_t seed,
                          int only_value = -1);

}  // namespace lowbit::test
