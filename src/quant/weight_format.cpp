#include "quant/weight_format.h"

#include <array>

#include "core/error.h"
#include "quant/float_formats.h"
#include "quant/i2s.h"
#include "quant/iq4_nl.h"
#include "quant/iq4_xs.h"
#include "quant/q1_0.h"
#include "quant/q2_0.h"
#include "quant/q2_k.h"
#include "quant/q3_k.h"
#include "quant/q4_0.h"
#include "quant/q4_1.h"
#include "quant/q4_k.h"
#include "quant/q5_k.h"
#include "quant/q6_k.h"
#include "quant/q8_0.h"
#include "quant/tq1_0.h"
#include "quant/tq2_0.h"

namespace lowbit {

namespace {

// One line per format: type, dequantize_row, quantize_row, dot_i8.
constexpr std::array kFormats = {
    WeightFormat{GgmlType::F32, dequantize_row_f32, quantize_row_f32, nullptr},
    WeightFormat{GgmlType::F16, dequantize_row_f16, quantize_row_f16, nullptr},
    WeightFormat{GgmlType::BF16, dequantize_row_bf16, quantize_row_bf16, nullptr},
    WeightFormat{GgmlType::Q8_0, dequantize_row_q8_0, quantize_row_q8_0, dot_i8_q8_0},
    WeightFormat{GgmlType::Q4_0, dequantize_row_q4_0, quantize_row_q4_0, dot_i8_q4_0},
    WeightFormat{GgmlType::Q4_1, dequantize_row_q4_1, quantize_row_q4_1, nullptr},
    WeightFormat{GgmlType::Q5_0, dequantize_row_q5_0, quantize_row_q5_0, nullptr},
    WeightFormat{GgmlType::Q5_1, dequantize_row_q5_1, quantize_row_q5_1, nullptr},
    WeightFormat{GgmlType::IQ4_NL, dequantize_row_iq4_nl, quantize_row_iq4_nl, dot_i8_iq4_nl},
    WeightFormat{GgmlType::IQ4_XS, dequantize_row_iq4_xs, quantize_row_iq4_xs, nullptr},
    WeightFormat{GgmlType::Q2_K, dequantize_row_q2_K, quantize_row_q2_K, nullptr},
    WeightFormat{GgmlType::Q3_K, dequantize_row_q3_K, quantize_row_q3_K, nullptr},
    WeightFormat{GgmlType::Q4_K, dequantize_row_q4_K, quantize_row_q4_K, nullptr},
    WeightFormat{GgmlType::Q5_K, dequantize_row_q5_K, quantize_row_q5_K, nullptr},
    WeightFormat{GgmlType::Q6_K, dequantize_row_q6_K, quantize_row_q6_K, nullptr},
    WeightFormat{GgmlType::TQ1_0, dequantize_row_tq1_0, quantize_row_tq1_0, dot_i8_tq1_0},
    WeightFormat{GgmlType::TQ2_0, dequantize_row_tq2_0, quantize_row_tq2_0, dot_i8_tq2_0},
    WeightFormat{GgmlType::I2_S, dequantize_row_i2s, quantize_row_i2s, dot_i8_i2s},
    WeightFormat{GgmlType::Q1_0, dequantize_row_q1_0, quantize_row_q1_0, dot_i8_q1_0},
    WeightFormat{GgmlType::Q2_0, dequantize_row_q2_0, quantize_row_q2_0, dot_i8_q2_0},
};

}  // namespace

const WeightFormat* find_weight_format(GgmlType type) {
  for (const auto& f : kFormats)
    if (f.type == type) return &f;
  return nullptr;
}

const WeightFormat& weight_format(GgmlType type) {
  const WeightFormat* f = find_weight_format(type);
  if (f == nullptr) {
    const GgmlTypeInfo* info = ggml_type_info(static_cast<uint32_t>(type));
    fail("tensor type ", info != nullptr ? info->name : "unknown", " (id ", static_cast<uint32_t>(type),
         ") has no reference implementation in lowbit");
  }
  return *f;
}

float tensor_scale(GgmlType type, const uint8_t* tensor_data, int64_t n_elements) {
  return type == GgmlType::I2_S ? i2s_tensor_scale(tensor_data, n_elements) : 1.0f;
}

int64_t row_offset(GgmlType type, int64_t row_length, int64_t r) { return r * ggml_row_bytes(type, row_length); }

}  // namespace lowbit
