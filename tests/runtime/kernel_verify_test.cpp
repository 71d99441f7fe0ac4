// verify's decision on synthetic logits: a lossless kernel passes within float
// noise and fails beyond it; an approximate one is reported, never failed.
#include "runtime/kernel_verify.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/rng.h"

namespace lowbit {
namespace {

struct Synthetic {
  std::vector<int32_t> tokens = {1, 7, 3, 9, 2};
  int64_t V = 16;
  std::vector<float> ref;
  Synthetic() {
    Rng rng(9);
    ref.resize(tokens.size() * static_cast<size_t>(V));
    for (auto& x : ref) x = 10.0f * (2.0f * rng.uniform_f() - 1.0f);
  }
};

TEST(KernelVerify, IdenticalLogitsPass) {
  Synthetic s;
  const KernelComparison c = compare_kernel_logits(s.ref, s.ref, s.tokens, s.V);
  EXPECT_EQ(c.logits.max_abs_diff, 0.0);
  EXPECT_EQ(c.distributions.mean_kld(), 0.0);
  EXPECT_EQ(c.distributions.top1_agreement(), 1.0);
  EXPECT_EQ(judge(c, true), Verdict::Pass);
}

TEST(KernelVerify, AccumulationOrderNoisePasses) {
  Synthetic s;
  std::vector<float> other = s.ref;
  for (auto& x : other) x = std::nextafter(x, 100.0f);  // one ulp everywhere
  EXPECT_EQ(judge(compare_kernel_logits(s.ref, other, s.tokens, s.V), true), Verdict::Pass);
}

TEST(KernelVerify, ALosslessKernelThatDiffersFails) {
  Synthetic s;
  std::vector<float> other = s.ref;
  other[3 * s.V + 5] += 0.05f;  // one logit off by 5e-3 of the largest (~10)
  const KernelComparison c = compare_kernel_logits(s.ref, other, s.tokens, s.V);
  EXPECT_NEAR(c.logits.max_abs_diff, 0.05, 1e-6);
  EXPECT_GT(c.distributions.max_kld(), 0.0);
  EXPECT_EQ(judge(c, true), Verdict::Fail);
  EXPECT_EQ(judge(c, true, 1e-2), Verdict::Pass);  // a looser --tolerance
  EXPECT_EQ(judge(c, false), Verdict::Approximate);
}

TEST(KernelVerify, TopOneAndTargetsUseTheNextToken) {
  Synthetic s;
  std::vector<float> other = s.ref;
  // Make position 0's top token something else.
  float* row = other.data();
  const int64_t top = std::max_element(row, row + s.V) - row;
  row[(top + 1) % s.V] = row[top] + 1.0f;
  const KernelComparison c = compare_kernel_logits(s.ref, other, s.tokens, s.V);
  EXPECT_DOUBLE_EQ(c.distributions.top1_agreement(), 4.0 / 5.0);
  EXPECT_EQ(c.distributions.nll().count(), 4);  // the last position has no next token
}

TEST(KernelVerify, SummarizesKernelsByCount) {
  EXPECT_EQ(summarize_kernels({"i2s/avx2", "ref", "i2s/avx2"}), "2 i2s/avx2, 1 ref");
}

}  // namespace
}  // namespace lowbit
