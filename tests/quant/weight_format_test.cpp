#include "quant/weight_format.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "quant/activation_quant.h"
#include "quant/i2s.h"
#include "quant_test_util.h"

namespace lowbit::weight_format_test {
namespace {

constexpr GgmlType kWithReference[] = {GgmlType::F32,  GgmlType::F16,   GgmlType::BF16,  GgmlType::Q8_0, GgmlType::Q4_0,
                                       GgmlType::Q6_K, GgmlType::TQ1_0, GgmlType::TQ2_0, GgmlType::I2_S};

TEST(WeightFormatTable, EveryReferenceIsListedWithItsFunctions) {
  for (GgmlType type : kWithReference) {
    const WeightFormat* f = find_weight_format(type);
    ASSERT_NE(f, nullptr) << ggml_type_name(type);
    EXPECT_EQ(f->type, type);
    EXPECT_NE(f->dequantize_row, nullptr) << ggml_type_name(type);
    EXPECT_EQ(&weight_format(type), f);
    const bool float_only =
        type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16 || type == GgmlType::Q6_K;
    EXPECT_EQ(f->dot_i8 == nullptr, float_only) << ggml_type_name(type);
    EXPECT_NE(f->quantize_row, nullptr) << ggml_type_name(type);  // Q6_K too: gen-model writes 6-bit heads
  }
}

TEST(WeightFormatTable, UnknownTypesAreNamedInTheError) {
  EXPECT_EQ(find_weight_format(GgmlType::Q8_1), nullptr);
  try {
    weight_format(GgmlType::Q8_1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q8_1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(weight_format(static_cast<GgmlType>(999)), Error);
}

TEST(WeightFormatTable, RowOffsets) {
  EXPECT_EQ(row_offset(GgmlType::F32, 10, 3), 120);
  EXPECT_EQ(row_offset(GgmlType::Q8_0, 64, 3), 3 * 68);
  EXPECT_EQ(row_offset(GgmlType::Q4_0, 96, 2), 2 * 54);
  EXPECT_EQ(row_offset(GgmlType::TQ1_0, 512, 5), 5 * 108);
  EXPECT_EQ(row_offset(GgmlType::TQ2_0, 768, 1), 198);
  EXPECT_EQ(row_offset(GgmlType::Q6_K, 256, 4), 840);
  EXPECT_EQ(row_offset(GgmlType::I2_S, 2560, 7), 7 * 640);
  EXPECT_THROW(row_offset(GgmlType::Q8_0, 48, 1), Error);
}

TEST(WeightFormatTable, TensorScaleIsTheI2SFloat) {
  std::vector<uint8_t> tensor(256 / 4 + 32, 0);
  const float s = 0.0625f;
  std::memcpy(&tensor[64], &s, 4);
  EXPECT_EQ(tensor_scale(GgmlType::I2_S, tensor.data(), 256), s);
  EXPECT_EQ(tensor_scale(GgmlType::Q8_0, tensor.data(), 256), 1.0f);
  EXPECT_EQ(tensor_scale(GgmlType::F16, tensor.data(), 256), 1.0f);
}

// Through the table, every int8 format: quantize a row, then dot it with int8
// activations; the result equals the float dot of the dequantized row with the
// activations' integers (to float accumulation error).
TEST(WeightFormatTable, DotMatchesDequantizedRow) {
  Rng rng(11);
  const int64_t n = 768;
  for (GgmlType type : kWithReference) {
    const WeightFormat& f = weight_format(type);
    if (f.dot_i8 == nullptr) continue;
    std::vector<float> x = test::random_normal(rng, n);
    if (type == GgmlType::TQ1_0 || type == GgmlType::TQ2_0 || type == GgmlType::I2_S)
      for (auto& v : x) v = v > 0.5f ? 0.25f : v < -0.5f ? -0.25f : 0.0f;
    std::vector<uint8_t> row(ggml_row_bytes(type, n));
    f.quantize_row(x.data(), row.data(), n);
    std::vector<float> w(n);
    f.dequantize_row(row.data(), w.data(), n);
    for (const auto& q : {test::random_int8(rng, n), std::vector<int8_t>(n, 127), std::vector<int8_t>(n, -128)}) {
      double exact = 0, magnitude = 0;
      for (int64_t i = 0; i < n; ++i) {
        exact += static_cast<double>(w[i]) * q[i];
        magnitude += std::fabs(static_cast<double>(w[i]) * q[i]);
      }
      EXPECT_NEAR(f.dot_i8(row.data(), q.data(), n), exact, magnitude * 1e-6 + 1e-6) << ggml_type_name(type);
    }
  }
}

// BitNet b1.58 end to end for one row: ternary weights * scale against
// absmax-quantized activations give y = dot * tensor_scale / activation scale.
TEST(WeightFormatTable, I2SRowWithActivationQuant) {
  Rng rng(12);
  const int64_t n = 512;
  const auto t = test::random_ternary(rng, n);
  std::vector<uint8_t> tensor(n / 4 + 32);
  pack_i2s(t.data(), n, 0.75f, tensor.data());
  const auto x = test::random_normal(rng, n);
  std::vector<int8_t> q(n);
  const auto aq = quantize_activations_absmax_ref(x.data(), n, q.data());
  const WeightFormat& f = weight_format(GgmlType::I2_S);
  const float y = f.dot_i8(tensor.data(), q.data(), n) * tensor_scale(GgmlType::I2_S, tensor.data(), n) / aq.scale;
  double expect = 0;
  for (int64_t i = 0; i < n; ++i) expect += 0.75 * t[i] * (q[i] / static_cast<double>(aq.scale));
  EXPECT_NEAR(y, expect, 1e-5 * (1 + std::fabs(expect)));
}

}  // namespace
}  // namespace lowbit::weight_format_test
