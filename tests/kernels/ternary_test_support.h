// Shared by the ternary kernel tests: random ternary tensors in the file
// formats, random activations, independent integer references, and the ISA
// levels this machine can run (each kernel is tested at every one of them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/rng.h"
#include "kernels/matmul.h"

namespace lowbit::test {

// The ISA variants to test: the detected features, then the same with
// AVX-512 VNNI, AVX-512, and AVX-VNNI cleared, keeping those the CPU runs.
struct IsaVariant {
  std::string name;
  CpuFeatures cpu;
};
std::vector<IsaVariant> isa_variants();

// rows x cols ternary values, about a third each of -1, 0, +1 (zero_fraction 0 ->
// no zeros).
std::vector<int8_t> random_ternary(int64_t rows, int64_t cols, uint64_t seed, double zero_fraction = 1.0 / 3);

// A tensor's bytes in `type` (I2_S, TQ1_0, TQ2_0 or F16) holding scale * t.
std::vector<uint8_t> encode_ternary(GgmlType type, const std::vector<int8_t>& t, int64_t rows, int64_t cols,
                                    float scale);

// tokens x k floats, normal, with every 97th value 40x larger (LLM-like outliers).
std::vector<float> random_activations(int64_t tokens, int64_t k, uint64_t seed);

// sum_k t[r][k] * q[k], exact, straight from the ternary values.
int32_t ternary_dot(const int8_t* t_row, const int8_t* q, int64_t k);

}  // namespace lowbit::test
