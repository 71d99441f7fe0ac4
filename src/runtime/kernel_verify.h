// `lowbit verify`: the same tokens through the reference kernel and through
// every optimized kernel that can run the model, compared logit by logit.
// A kernel is lossless when it computes what the reference computes up to
// float accumulation order (design.md); one that approximates says so in its
// family's description, and one that quantizes activations to int8 where the
// reference multiplies in float (forced onto float weights) is approximate too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/kl_divergence.h"

namespace lowbit {

// Lossless kernels must agree with the reference to this fraction of the
// largest reference logit (float accumulation order, and an int8 activation
// rounding flipped by it now and then).
constexpr double kLosslessRelativeTolerance = 1e-4;

// Every matrix of a model with the kernel that runs it, in load order.
struct KernelUse {
  std::vector<std::string> kernels;  // Matmul::kernel_name() per matrix
  bool lossless = true;
  std::string approximate_because;   // first reason, when !lossless
};

// Compares model's matrices with ref's (the same file loaded with --kernel ref).
KernelUse describe_kernel_use(const Model& model, const Model& ref);
// "30 i2s/avx512-vnni, 1 ref": counts per kernel name, most used first.
std::string summarize_kernels(const std::vector<std::string>& kernels);

// All logits [n][V] of tokens evaluated from an empty cache, with an f32 KV
// cache (an f16 cache would round K and V to 11 bits, hiding small differences).
std::vector<float> evaluate_all_logits(const Model& model, ThreadPool& pool, const std::vector<int32_t>& tokens);

struct KernelComparison {
  LogitDifference logits;
  DistributionComparison distributions;
};

// ref, other: [n][V] for tokens (the next token is each position's target).
KernelComparison compare_kernel_logits(const std::vector<float>& ref, const std::vector<float>& other,
                                       const std::vector<int32_t>& tokens, int64_t n_vocab);

enum class Verdict { Pass, Fail, Approximate };
// Lossless kernels pass when their logits are within relative_tolerance of
// the reference's; approximate ones are reported, never failed.
Verdict judge(const KernelComparison& c, bool lossless, double relative_tolerance = kLosslessRelativeTolerance);

}  // namespace lowbit
