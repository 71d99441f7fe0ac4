// Random weights in file formats for the kernel timing tools (`lowbit
// bench-gemv`, `lowbit roofline`) and the kernel benchmarks (bench/): valid
// tensors of any shape, made in memory.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ggml_types.h"
#include "core/rng.h"

namespace lowbit::tools {

// An I2_S tensor's bytes (trailer included): uniform random ternary values
// (a third each of -1, 0, +1), scale 1; from rng's sequence or a seed's.
std::vector<uint8_t> random_i2s(int64_t rows, int64_t cols, Rng& rng);
std::vector<uint8_t> random_i2s(int64_t rows, int64_t cols, uint64_t seed);

// A block format's bytes: random codes, and every fp16 scale (d, and dmin or
// m where the format has one) 0.01, so that the values stay small and finite.
// For the formats whose scales sit at fixed places in each block: Q8_0, Q4_0,
// Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, Q2_0, Q1_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
std::vector<uint8_t> random_blocks(GgmlType type, int64_t rows, int64_t cols, uint64_t seed);

// F16 weights: normal values of a head's size (sd 0.02), never Inf or NaN.
std::vector<uint8_t> random_f16(int64_t rows, int64_t cols, uint64_t seed);

}  // namespace lowbit::tools
