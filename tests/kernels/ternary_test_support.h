// Shared by the ternary kernel tests: random ternary tensors in the file
// formats, random activations, independent integer references, and the ISA
// levels this machine can run (each kernel is tested at every one of them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"

namespace lowbit::test {

// The ISA variants to test: the detected features, then the same with
// AVX-512 VNNI, AVX-512, and AVX-VNNI cleared, keeping those the CPU runs;
// on 64-bit Arm, NEON with the dot product.
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

// tokens rows of int8 activations, `stride` apart, the first k of each set by
// `pattern`: 0 random, 1 all -128, 2 all +127, 3 alternating +127 / -128; the
// rest of each row 0 (kernels may read up to the stride).
std::vector<int8_t> pattern_activations(int tokens, int64_t stride, int64_t k, int pattern, Rng& rng);

// out[tk * out_rows + r] == sum_i (t[r][i] + 1) * q[tk * stride + i] for r < rows:
// a tile-dots kernel's exact integer result for `rows` rows of t (rows x k).
void expect_code_dots(const std::vector<int8_t>& t, int64_t k, const std::vector<int8_t>& q, int64_t stride,
                      int tokens, const std::vector<int32_t>& out, const std::string& what, int rows = 16,
                      int out_rows = 16);

// m's output for `tokens` tokens of x (tokens x m.cols() floats).
std::vector<float> run_matmul(const Matmul& m, const std::vector<float>& x, int64_t tokens, ThreadPool& pool);

// a and b bit for bit (gtest failures name `what` and the index).
void expect_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b, const std::string& what);

// Every activation at +-127 (the most absmax makes) against weights without
// zeros, the largest sums: `kernel` at each variant gives bitwise the ref's y,
// for 3 tokens at once and for each token alone (one token has its own loop).
void expect_extreme_activations_bitwise(const std::string& kernel, const std::vector<IsaVariant>& variants);

}  // namespace lowbit::test
