#include "ternary_test_support.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "core/half.h"
#include "kernels/dispatch.h"
#include "quant/i2s.h"
#include "quant/weight_format.h"

namespace lowbit::test {

std::vector<IsaVariant> isa_variants() {
  std::vector<IsaVariant> v;
  CpuFeatures cpu = cpu_features();
  if (cpu.has_avx512_level() && cpu.avx512vnni) v.push_back({"avx512-vnni", cpu});
  cpu.avx512vnni = false;
  if (cpu.has_avx512_level()) v.push_back({"avx512", cpu});
  cpu.avx512f = cpu.avx512bw = cpu.avx512vl = cpu.avx512dq = cpu.avx512vbmi = cpu.avx512bf16 = false;
  if (cpu.has_avx2_level() && cpu.avx_vnni) v.push_back({"avx2-vnni", cpu});
  cpu.avx_vnni = false;
  if (cpu.has_avx2_level()) v.push_back({"avx2", cpu});
  if (cpu.has_neon_level()) v.push_back({"neon-dotprod", cpu});
  return v;
}

std::vector<int8_t> random_ternary(int64_t rows, int64_t cols, uint64_t seed, double zero_fraction) {
  Rng rng(seed);
  std::vector<int8_t> t(static_cast<size_t>(rows * cols));
  for (auto& v : t) v = rng.uniform() < zero_fraction ? 0 : (rng.next_u32() & 1 ? 1 : -1);
  return t;
}

std::vector<uint8_t> encode_ternary(GgmlType type, const std::vector<int8_t>& t, int64_t rows, int64_t cols,
                                    float scale) {
  if (type == GgmlType::I2_S) {
    std::vector<uint8_t> bytes(static_cast<size_t>(rows * cols / 4 + kI2STrailerBytes));
    pack_i2s(t.data(), rows * cols, scale, bytes.data());
    return bytes;
  }
  const WeightFormat& f = weight_format(type);
  const int64_t row_bytes = ggml_row_bytes(type, cols);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * row_bytes));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < cols; ++k) row[k] = scale * t[r * cols + k];
    f.quantize_row(row.data(), bytes.data() + r * row_bytes, cols);
  }
  return bytes;
}

std::vector<float> random_activations(int64_t tokens, int64_t k, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(tokens * k));
  for (auto& v : x) v = static_cast<float>(rng.normal());
  for (size_t i = 0; i < x.size(); i += 97) x[i] *= 40;  // outliers, as LLM activations have
  return x;
}

int32_t ternary_dot(const int8_t* t_row, const int8_t* q, int64_t k) {
  int32_t s = 0;
  for (int64_t i = 0; i < k; ++i) s += t_row[i] * q[i];
  return s;
}

std::vector<int8_t> pattern_activations(int tokens, int64_t stride, int64_t k, int pattern, Rng& rng) {
  std::vector<int8_t> q(static_cast<size_t>(tokens * stride), 0);
  for (int tk = 0; tk < tokens; ++tk)
    for (int64_t i = 0; i < k; ++i) {
      int8_t v = static_cast<int8_t>(rng.next_u32());
      if (pattern == 1) v = -128;
      if (pattern == 2) v = 127;
      if (pattern == 3) v = (i + tk) % 2 ? 127 : -128;
      q[tk * stride + i] = v;
    }
  return q;
}

void expect_code_dots(const std::vector<int8_t>& t, int64_t k, const std::vector<int8_t>& q, int64_t stride,
                      int tokens, const std::vector<int32_t>& out, const std::string& what, int rows, int out_rows) {
  for (int tk = 0; tk < tokens; ++tk)
    for (int r = 0; r < rows; ++r) {
      int32_t expect = 0;
      for (int64_t i = 0; i < k; ++i) expect += (t[r * k + i] + 1) * q[tk * stride + i];
      ASSERT_EQ(out[tk * out_rows + r], expect) << what << " k=" << k << " token=" << tk << " row=" << r;
    }
}

std::vector<float> run_matmul(const Matmul& m, const std::vector<float>& x, int64_t tokens, ThreadPool& pool) {
  ActivationBatch in(tokens, m.cols());
  in.set(x.data(), tokens, m.cols());
  std::vector<float> y(static_cast<size_t>(tokens * m.rows()), -1.0f);
  m.forward(in, y.data(), pool);
  return y;
}

void expect_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(float_to_bits(a[i]), float_to_bits(b[i])) << what << " at " << i << ": " << a[i] << " vs " << b[i];
}

void expect_extreme_activations_bitwise(const std::string& kernel, const std::vector<IsaVariant>& variants) {
  ThreadPool pool(1);
  const int64_t n = 48, k = 6912, tokens = 3;
  const auto t = random_ternary(n, k, 5, 0.0);
  const auto bytes = encode_ternary(GgmlType::I2_S, t, n, k, 2.5f);
  const WeightView w{"extreme", GgmlType::I2_S, n, k, bytes.data()};
  std::vector<float> x(static_cast<size_t>(tokens * k));
  for (int64_t i = 0; i < k; ++i) {
    x[i] = 3.0f;                               // all +127
    x[k + i] = -3.0f;                          // all -127
    x[2 * k + i] = t[i] > 0 ? 1e30f : -1e30f;  // +-127 aligned with row 0: |dot| = 127 K
  }
  const auto expect = run_matmul(*make_reference_matmul(w), x, tokens, pool);
  EXPECT_FLOAT_EQ(expect[2 * n], 2.5f * k * 1e30f);
  for (const auto& isa : variants) {
    const auto m = make_matmul(w, kernel, pool, isa.cpu);
    ASSERT_EQ(m->kernel_name(), kernel + "/" + isa.name);
    expect_bitwise_equal(run_matmul(*m, x, tokens, pool), expect, isa.name);
    for (int64_t tk = 0; tk < tokens; ++tk) {
      const std::vector<float> xt(x.begin() + tk * k, x.begin() + (tk + 1) * k);
      const std::vector<float> et(expect.begin() + tk * n, expect.begin() + (tk + 1) * n);
      expect_bitwise_equal(run_matmul(*m, xt, 1, pool), et, isa.name + " token " + std::to_string(tk) + " alone");
    }
  }
}

}  // namespace lowbit::test
