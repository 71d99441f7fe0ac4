// The kernel registry: names are unique, auto never picks an approximation.
#include "kernels/dispatch.h"

#include <gtest/gtest.h>

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
    const bool approximate = name == "tl1_0" || name == "tl2_0" || name == "q6_k_q8k" || name == "q4_k_q8k";
    EXPECT_EQ(f.lossless, !approximate) << name;
  }
  EXPECT_NE(find_kernel_family("ref"), nullptr);
  EXPECT_EQ(find_kernel_family("no-such-kernel"), nullptr);
}

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
