#include "ternary_test_support.h"

#include <algorithm>

#include "core/half.h"
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

}  // namespace lowbit::test
