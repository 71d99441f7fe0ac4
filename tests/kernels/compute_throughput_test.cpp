// The roofline's C (kernels/compute_throughput.h) is timed on the path decode
// runs: a matrix whose kernel pairs with itself is read two row blocks side by
// side, as forward_together reads a region's halves. Timed on the single-block
// kernel instead, int1's bound sat below what its GEMVs read from memory.
#include <gtest/gtest.h>

#include "core/cpu_features.h"
#include "core/error.h"
#include "kernels/compute_throughput.h"
#include "kernels/dispatch.h"
#include "vnni4_test_support.h"

namespace lowbit::test {
namespace {

std::unique_ptr<Matmul> make_family(const char* family, GgmlType type, const std::vector<uint8_t>& data, int64_t rows,
                                    int64_t cols) {
  const WeightView w{"l1", type, rows, cols, data.data()};
  const KernelFamily* f = find_kernel_family(family);
  if (f == nullptr || f->score(w, cpu_features()) == 0) return nullptr;
  ThreadPool pool(1);
  return f->make(w, cpu_features(), pool);
}

TEST(ComputeThroughput, TimesThePathDecodeRuns) {
  const int64_t rows = 2 * kVnni4Rows, cols = 2048;
  for (const auto& [family, type] : {std::pair{"int2", GgmlType::Q2_0}, std::pair{"int1", GgmlType::Q1_0},
                                     std::pair{"q8_0", GgmlType::Q8_0}}) {
    const auto data = random_scaled_blocks(type, rows, cols, 5);
    const std::unique_ptr<Matmul> m = make_family(family, type, data, rows, cols);
    if (m == nullptr) continue;  // no kernel of this family at this CPU's level
    bool pairs = false;
    const ComputeThroughput c = measure_compute_throughput(*m, 3e9, &pairs);
    EXPECT_EQ(pairs, m->pairs_with(*m, 1)) << m->kernel_name();
    // B: the layout's bytes (scales included) per 32 weights.
    EXPECT_DOUBLE_EQ(c.bytes_per_vector, static_cast<double>(m->weight_bytes()) / (rows * cols / 32)) << m->kernel_name();
    EXPECT_GT(c.cycles_per_vector, 0) << m->kernel_name();
#if LOWBIT_X86_KERNELS
    // The AVX-512 int2 and int1 kernels have a pair path (Vnni4Spec::pair):
    // that is the one to time.
    if (cpu_features().has_avx512_level() && cpu_features().avx512vnni && std::string(family) != "q8_0") {
      EXPECT_TRUE(pairs) << m->kernel_name();
    }
#endif
  }
}

TEST(ComputeThroughput, NeedsAnEvenNumberOfRowBlocks) {
  const int64_t rows = kVnni4Rows, cols = 2048;  // one row block: nothing to pair it with
  const auto data = random_scaled_blocks(GgmlType::Q8_0, rows, cols, 6);
  const std::unique_ptr<Matmul> m = make_family("q8_0", GgmlType::Q8_0, data, rows, cols);
  ASSERT_NE(m, nullptr) << "q8_0 runs at every level lowbit builds for";
  try {
    measure_compute_throughput(*m, 3e9);
    FAIL() << "a matrix of one row block was timed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("even number"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lowbit::test
