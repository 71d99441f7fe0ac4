#include "vnni4_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "core/cpu_features.h"
#include "core/rng.h"
#include "kernels/dispatch.h"
#include "kernels/int1_lut.h"
#include "ternary_test_support.h"

namespace lowbit::test {

std::vector<uint8_t> random_scaled_blocks(GgmlType type, int64_t rows, int64_t cols, uint64_t seed) {
  const GgmlTypeInfo& info = ggml_type_info(type);
  std::vector<uint8_t> data(static_cast<size_t>(ggml_tensor_bytes(type, rows * cols, cols)));
  Rng rng(seed);
  for (auto& b : data) b = static_cast<uint8_t>(rng.next_u32());
  for (size_t off = 0; off < data.size(); off += static_cast<size_t>(info.block_bytes)) {
    const float d = std::ldexp(1.0f + rng.uniform_f(), static_cast<int>(rng.below(10)) - 8) *
                    (rng.below(2) ? 1.0f : -1.0f);
    const uint16_t h = float_to_fp16(d);
    std::memcpy(&data[off], &h, 2);
  }
  return data;
}

std::vector<std::string> expect_family_matches_reference(const std::string& family, GgmlType type,
                                                         const std::vector<uint8_t>& data, int64_t rows,
                                                         int64_t cols, int64_t tokens, uint64_t seed) {
  ThreadPool pool(2);
  const WeightView w{"test.weight", type, rows, cols, data.data()};
  const std::vector<float> x = random_activations(tokens, cols, seed);
  ActivationBatch in(tokens, cols);
  in.set(x.data(), tokens, cols);
  std::vector<float> expect(static_cast<size_t>(tokens * rows)), got(expect.size());
  make_matmul(w, "ref", pool)->forward(in, expect.data(), pool);
  std::vector<std::string> names;
  for (const IsaVariant& v : isa_variants()) {
    // Both vendors' code paths: AMD's prefetch hints and one-token streams too.
    for (const bool amd : {false, true}) {
      CpuFeatures cpu = v.cpu;
      cpu.vendor_amd = amd;
      const KernelFamily* f = find_kernel_family(family);
      if (f == nullptr || f->score(w, cpu) <= 0) continue;
      const auto m = f->make(w, cpu, pool);
      std::fill(got.begin(), got.end(), -1.0f);
      in.set(x.data(), tokens, cols);
      m->forward(in, got.data(), pool);
      names.push_back(m->kernel_name());
      for (int64_t i = 0; i < tokens * rows; ++i)
        EXPECT_EQ(float_to_bits(got[i]), float_to_bits(expect[i]))
            << m->kernel_name() << " (" << v.name << (amd ? ", AMD" : "") << ") " << rows << "x" << cols
            << " token " << i / rows << " row " << i % rows << ": " << got[i] << " vs " << expect[i];
    }
  }
  return names;
}

}  // namespace lowbit::test

namespace lowbit::test {

std::vector<NamedKernel> runnable(const std::vector<std::pair<Vnni4Isa, NamedKernel>>& kernels) {
  const CpuFeatures& cpu = cpu_features();
  std::vector<NamedKernel> out;
  for (const auto& [isa, k] : kernels) {
    const bool ok = isa == Vnni4Isa::Avx512Vnni ? cpu.has_avx512_level() && cpu.avx512vnni
                    : isa == Vnni4Isa::AvxVnni  ? cpu.has_avx2_level() && cpu.avx_vnni
                    : isa == Vnni4Isa::NeonDot  ? cpu.has_neon_level()
                                                : cpu.has_avx2_level();
    if (ok) out.push_back(k);
  }
  return out;
}

void expect_kernels_exact(Vnni4Bits bits, const std::vector<NamedKernel>& kernels, int value_count,
                          const std::vector<int>& weight_of, int32_t xsum_factor, const uint8_t* lut, int64_t rows,
                          int64_t cols, int64_t group, uint64_t seed, int only_value) {
  ASSERT_FALSE(kernels.empty());
  Rng rng(seed);
  const int64_t groups = cols / group;
  std::vector<uint8_t> values(static_cast<size_t>(rows * cols));  // [rows][cols]
  std::vector<uint16_t> scales(static_cast<size_t>(rows * groups));
  for (auto& v : values) v = static_cast<uint8_t>(only_value >= 0 ? only_value : rng.below(value_count));
  for (auto& s : scales) s = float_to_fp16(static_cast<float>(rng.normal()));
  ThreadPool pool(2);
  const Vnni4Layout layout = pack_vnni4(
      bits, rows, cols, group,
      [&](int64_t r, uint8_t* v, uint16_t* s) {
        std::memcpy(v, &values[r * cols], cols);
        std::memcpy(s, &scales[r * groups], groups * 2);
      },
      pool);
  std::vector<int8_t> x(static_cast<size_t>(cols));
  for (int64_t k = 0; k < cols; ++k)
    x[k] = only_value >= 0 || k < cols / 4 ? -128 : k < cols / 2 ? 127 : static_cast<int8_t>(rng.next_u32());
  std::vector<int32_t> xsum(static_cast<size_t>(groups), 0);
  for (int64_t k = 0; k < cols; ++k) xsum[k / group] += x[k];
  const float inv = 1.0f / 93.5f;
  // int1_lut's tables, by the scalar builder.
  AlignedBuffer<uint8_t> tables(static_cast<size_t>(int1_lut_table_bytes(cols)));
  if (bits == Vnni4Bits::OneLookup) int1_lut_tables_ref(x.data(), cols, tables.data());
  for (const NamedKernel& nk : kernels) {
    for (int64_t rb = 0; rb < layout.row_blocks(); ++rb) {
      alignas(64) float out[kVnni4Rows];
      nk.kernel({layout.codes(rb), layout.group_bytes(), groups, group / layout.k_per_step(), x.data(), xsum.data(),
                 xsum_factor, lut, inv, out, bits == Vnni4Bits::OneLookup ? tables.data() : nullptr});
      for (int64_t r = rb * kVnni4Rows; r < std::min(rows, (rb + 1) * kVnni4Rows); ++r) {
        float acc = 0;
        for (int64_t g = 0; g < groups; ++g) {
          int32_t isum = 0;
          for (int64_t k = g * group; k < (g + 1) * group; ++k) isum += weight_of[values[r * cols + k]] * x[k];
          acc += fp16_to_float(scales[r * groups + g]) * static_cast<float>(isum);
        }
        ASSERT_EQ(float_to_bits(out[r % kVnni4Rows]), float_to_bits(acc * inv))
            << nk.name << " row " << r << ": " << out[r % kVnni4Rows] << " vs " << acc * inv;
      }
    }
  }
}

}  // namespace lowbit::test
