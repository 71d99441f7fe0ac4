// The references against files written by the formats' own tools
// (fixtures/peer/tiny-a): the same random ternary model as F16 (w = s * t
// stored as fp16), as I2_S by bitnet.cpp, and as TQ1_0 / TQ2_0 (token_embd in
// Q6_K) by llama.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fixtures.h"
#include "formats/gguf.h"
#include "quant/i2s.h"
#include "quant/weight_format.h"
#include "quant/quant_test_util.h"

namespace lowbit {
namespace {


const GgufFile& f16_file() {
  static const GgufFile file(testing::fixture("peer/tiny-a/tiny-a-f16.gguf"));
  return file;
}

std::vector<float> f16_values(const GgufTensorInfo& t) {
  EXPECT_EQ(t.type, GgmlType::F16);
  std::vector<float> v(static_cast<size_t>(t.n_elements));
  for (size_t i = 0; i < v.size(); ++i) v[i] = test::le_fp16(t.data + 2 * i);
  return v;
}

// Every tensor of `file` with type `type`, dequantized row by row through the
// format table, next to the same tensor of the F16 file.
template <class Check>
int for_each_tensor_of_type(const GgufFile& file, GgmlType type, Check check) {
  int seen = 0;
  for (const GgufTensorInfo& t : file.tensors()) {
    const std::string& name = t.name;
    if (t.type != type) continue;
    const GgufTensorInfo& ref = f16_file().tensor(name);
    EXPECT_EQ(t.shape, ref.shape) << name;
    const int64_t cols = t.shape[0], rows = t.n_elements / cols;
    const WeightFormat& f = weight_format(type);
    std::vector<float> got(static_cast<size_t>(t.n_elements));
    for (int64_t r = 0; r < rows; ++r)
      f.dequantize_row(t.data + row_offset(type, cols, r), got.data() + r * cols, cols);
    check(name, t, got, f16_values(ref));
    ++seen;
  }
  return seen;
}

TEST(I2SRealFile, CodesAreTheSignsAndScaleIsMaxAbsOfTheF16File) {
  const GgufFile file(testing::fixture("peer/tiny-a/tiny-a-i2_s.gguf"));
  const int seen = for_each_tensor_of_type(file, GgmlType::I2_S,
                                           [&](const std::string& name, const GgufTensorInfo& t,
                                               const std::vector<float>& got, const std::vector<float>& ref) {
                                             const int64_t n = t.n_elements;
                                             std::vector<int8_t> ternary(n);
                                             unpack_i2s(t.data, n, ternary.data());
                                             float max_abs = 0;
                                             int64_t mismatches = 0;
                                             for (int64_t i = 0; i < n; ++i) {
                                               const int sign = ref[i] > 0 ? 1 : ref[i] < 0 ? -1 : 0;
                                               mismatches += ternary[i] != sign || got[i] != sign;
                                               max_abs = std::fmax(max_abs, std::fabs(ref[i]));
                                             }
                                             EXPECT_EQ(mismatches, 0) << name;
                                             const float scale = tensor_scale(GgmlType::I2_S, t.data, n);
                                             EXPECT_NEAR(scale, max_abs, max_abs * std::ldexp(1.0, -11)) << name;
                                             EXPECT_EQ(t.bytes, static_cast<uint64_t>(n / 4 + kI2STrailerBytes)) << name;
                                           });
  EXPECT_EQ(seen, 14);
}

// llama.cpp's quantizer sets d = max|w| of each block, so its TQ tensors
// dequantize to exactly the F16 file's values.
void expect_equal_to_f16(const char* file_name, GgmlType type) {
  const GgufFile file(testing::fixture(std::string("peer/tiny-a/") + file_name));
  const int seen = for_each_tensor_of_type(
      file, type,
      [](const std::string& name, const GgufTensorInfo&, const std::vector<float>& got, const std::vector<float>& ref) {
        int64_t mismatches = 0;
        for (size_t i = 0; i < got.size(); ++i) mismatches += got[i] != ref[i];
        EXPECT_EQ(mismatches, 0) << name;
      });
  EXPECT_EQ(seen, 14) << file_name;
}

TEST(TQ1_0RealFile, DequantizesToTheF16File) { expect_equal_to_f16("tiny-a-tq1_0.gguf", GgmlType::TQ1_0); }
TEST(TQ2_0RealFile, DequantizesToTheF16File) { expect_equal_to_f16("tiny-a-tq2_0.gguf", GgmlType::TQ2_0); }

// token_embd is Q6_K in the TQ files: within a 6-bit step of the F16 values.
TEST(Q6_KRealFile, TokenEmbeddingIsCloseToTheF16File) {
  const GgufFile file(testing::fixture("peer/tiny-a/tiny-a-tq2_0.gguf"));
  const int seen = for_each_tensor_of_type(
      file, GgmlType::Q6_K,
      [](const std::string& name, const GgufTensorInfo&, const std::vector<float>& got, const std::vector<float>& ref) {
        double worst = 0;
        for (size_t b = 0; b < got.size() / 16; ++b) {
          double amax = 0;
          for (size_t i = 16 * b; i < 16 * b + 16; ++i) amax = std::fmax(amax, std::fabs(ref[i]));
          for (size_t i = 16 * b; i < 16 * b + 16; ++i) worst = std::fmax(worst, std::fabs(got[i] - ref[i]) / amax);
        }
        RecordProperty("worst_relative_error", std::to_string(worst));
        EXPECT_LT(worst, 1.0 / 32) << name;
      });
  EXPECT_EQ(seen, 1);
}

}  // namespace
}  // namespace lowbit
