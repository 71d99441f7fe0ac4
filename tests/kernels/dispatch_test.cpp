// The kernel registry: names are unique, auto never picks an approximation.
#include "kernels/dispatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "quant/i2s.h"

namespace lowbit {
namespace {

TEST(KernelDispatch, FamilyNamesAreUniqueAndApproximationsAreMarked) {
  std::set<std::string> names;
  for (const auto& f : kernel_families()) {
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate family " << f.name;
    const std::string name = f.name;
    // The int8-LUT variants and the int8-activation k-quants (Q8_K) are the approximate
    // ones (design.md rule 2: they say so in their name and docs).
    const bool approximate = name == "tl1_0" || name == "tl2_0" || name == "q6_k_q8k" || name == "q4_k_q8k" ||
                             name == "q5_k_q8k" || name == "q2_k_q8k" || name == "q3_k_q8k" ||
                             name == "iq4_xs_q8k";
    EXPECT_EQ(f.lossless, !approximate) << name;
  }
  EXPECT_NE(find_kernel_family("ref"), nullptr);
  EXPECT_EQ(find_kernel_family("no-such-kernel"), nullptr);
}

#if LOWBIT_X86_KERNELS  // the Q8_K families are AVX2 code
// "a+b" forces each family on the matrices it takes, in order; the rest go
// to auto. A name that is not a family fails, naming it.
TEST(KernelDispatch, SeveralForcedFamiliesJoinedByPlus) {
  ASSERT_TRUE(cpu_features().has_avx2_level()) << "the k-quant x Q8_K kernels need AVX2";
  const std::vector<uint8_t> q4k(16 * 144, 0), q6k(16 * 210, 0);  // zero blocks: valid, d = 0
  std::vector<int8_t> t(16 * 256);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int8_t>(static_cast<int>(i * 5 % 3) - 1);
  std::vector<uint8_t> i2s(16 * 256 / 4 + 32);
  pack_i2s(t.data(), 16 * 256, 0.5f, i2s.data());
  ThreadPool pool(1);
  const std::string both = "q4_k_q8k+q6_k_q8k";
  EXPECT_EQ(make_matmul({"a", GgmlType::Q4_K, 16, 256, q4k.data()}, both, pool)->kernel_name(), "q4_k_q8k/avx2");
  EXPECT_EQ(make_matmul({"b", GgmlType::Q6_K, 16, 256, q6k.data()}, both, pool)->kernel_name().rfind("q6_k_q8k/", 0), 0u);
  const WeightView ternary{"c", GgmlType::I2_S, 16, 256, i2s.data()};
  EXPECT_EQ(make_matmul(ternary, both, pool)->kernel_name(), make_matmul(ternary, "auto", pool)->kernel_name());
  EXPECT_EQ(forced_kernel_names(both), (std::vector<std::string>{"q4_k_q8k", "q6_k_q8k"}));
  EXPECT_TRUE(forced_kernel_names("auto").empty());
  // "q8k": every int8-activation k-quant family, whatever else comes with it.
  const auto group = forced_kernel_names("q8k+ref");
  for (const std::string name : {"q6_k_q8k", "q4_k_q8k", "q5_k_q8k", "q2_k_q8k", "q3_k_q8k", "iq4_xs_q8k"})
    EXPECT_NE(std::find(group.begin(), group.end(), name), group.end()) << name;
  EXPECT_EQ(group.back(), "ref");
  EXPECT_EQ(group.size(), 7u);
  EXPECT_EQ(make_matmul({"a", GgmlType::Q4_K, 16, 256, q4k.data()}, "q8k", pool)->kernel_name(), "q4_k_q8k/avx2");
  EXPECT_EQ(make_matmul(ternary, "q8k", pool)->kernel_name(), make_matmul(ternary, "auto", pool)->kernel_name());
  for (const std::string bad : {"q4_k_q8k+nope", "q4_k_q8k+", "+q4_k_q8k", ""}) {
    try {
      forced_kernel_names(bad);
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("unknown kernel"), std::string::npos) << e.what();
    }
  }
}
#endif

TEST(KernelDispatch, AutoPicksALosslessKernelAndUnknownNamesFail) {
  const int64_t rows = 32, cols = 256;
  std::vector<int8_t> t(rows * cols);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int8_t>(static_cast<int>(i * 7 % 3) - 1);
  std::vector<uint8_t> data(static_cast<size_t>(rows * cols / 4 + 32));
  pack_i2s(t.data(), rows * cols, 0.5f, data.data());
  const WeightView w{"w", GgmlType::I2_S, rows, cols, data.data()};
  ThreadPool pool(1);
  const auto m = make_matmul(w, "auto", pool);
  const std::string chosen = m->kernel_name();
  const KernelFamily* f = find_kernel_family(chosen.substr(0, chosen.find('/')));
  ASSERT_NE(f, nullptr) << chosen;
  EXPECT_TRUE(f->lossless) << chosen;
  EXPECT_THROW(make_matmul(w, "no-such-kernel", pool), Error);
}

}  // namespace
}  // namespace lowbit
