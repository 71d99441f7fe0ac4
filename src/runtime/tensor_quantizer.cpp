#include "runtime/tensor_quantizer.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "quant/i2s.h"
#include "quant/ternarize.h"
#include "quant/weight_format.h"

namespace lowbit {

const std::vector<GgmlType>& quantize_target_types() {
  static const std::vector<GgmlType> types = {GgmlType::F32,  GgmlType::F16,   GgmlType::BF16,  GgmlType::Q8_0,
                                              GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q2_0, GgmlType::Q1_0, GgmlType::TQ2_0,
                                              GgmlType::TQ1_0, GgmlType::I2_S};
  return types;
}

bool is_ternary_type(GgmlType type) {
  return type == GgmlType::TQ1_0 || type == GgmlType::TQ2_0 || type == GgmlType::I2_S;
}

bool is_float_type(GgmlType type) {
  return type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16;
}

GgmlType fit_type(GgmlType wanted, int64_t row_length, GgmlType source) {
  const std::vector<GgmlType> chain = is_ternary_type(wanted)
                                          ? std::vector<GgmlType>{wanted, GgmlType::Q2_0, GgmlType::Q8_0, GgmlType::F16}
                                          : std::vector<GgmlType>{wanted, GgmlType::Q8_0, source};
  for (GgmlType t : chain) {
    // ggml declares I2_S with blocks of 1, but its packing needs rows of whole 128-weight blocks.
    const int64_t block = t == GgmlType::I2_S ? kI2SBlockSize : ggml_type_info(t).block_size;
    if (row_length % block == 0) return t;
  }
  return source;
}

int64_t TensorSource::n_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<float> dequantize_tensor(const TensorSource& t, ThreadPool& pool) {
  const WeightFormat& fmt = weight_format(t.type);
  const int64_t n = t.n_elements(), cols = t.shape[0], rows = n / cols;
  const float scale = tensor_scale(t.type, t.data, n);
  std::vector<float> values(static_cast<size_t>(n));  // [rows][cols]
  pool.parallel_for(rows, 64, [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      float* dst = values.data() + r * cols;
      fmt.dequantize_row(t.data + row_offset(t.type, cols, r), dst, cols);
      if (scale != 1.0f)
        for (int64_t k = 0; k < cols; ++k) dst[k] *= scale;
    }
  });
  return values;
}

namespace {

// Values already of the form s * {-1, 0, +1} (a ternary model stored in
// float) keep exactly those: absmean would find the right signs but a scale
// of s times the fraction of nonzeros. Anything else is ternarized as BitNet
// b1.58 trains: absmean. Returns the scale.
float ternarize_tensor(const std::vector<float>& values, int8_t* trits) {
  float s = 0;
  for (float v : values) s = std::max(s, std::fabs(v));
  const bool ternary = s > 0 && std::all_of(values.begin(), values.end(), [s](float v) { return v == 0 || std::fabs(v) == s; });
  if (!ternary) return ternarize_absmean(values.data(), static_cast<int64_t>(values.size()), trits);
  for (size_t i = 0; i < values.size(); ++i) trits[i] = static_cast<int8_t>(values[i] > 0 ? 1 : values[i] < 0 ? -1 : 0);
  return s;
}

}  // namespace

std::vector<uint8_t> convert_tensor(const TensorSource& t, GgmlType to, bool ternarize, ThreadPool& pool) {
  const int64_t n = t.n_elements(), cols = t.shape[0], rows = n / cols;
  std::vector<float> values = dequantize_tensor(t, pool);
  std::vector<uint8_t> out(static_cast<size_t>(ggml_tensor_bytes(to, n, cols)));
  if (ternarize) {
    std::vector<int8_t> trits(static_cast<size_t>(n));
    const float gamma = ternarize_tensor(values, trits.data());
    if (to == GgmlType::I2_S) {
      pack_i2s(trits.data(), n, gamma, out.data());
      return out;
    }
    std::transform(trits.begin(), trits.end(), values.begin(), [gamma](int8_t v) { return gamma * v; });
  }
  const WeightFormat& fmt = weight_format(to);
  if (fmt.quantize_row == nullptr) fail("tensor ", t.name, ": lowbit cannot write type ", ggml_type_name(to));
  const int64_t row_bytes = ggml_row_bytes(to, cols);
  pool.parallel_for(rows, 64, [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) fmt.quantize_row(values.data() + r * cols, out.data() + r * row_bytes, cols);
  });
  return out;
}

}  // namespace lowbit
