// Converting one weight tensor to another GGUF type, and choosing the type a
// matrix can take: a block type needs rows that are whole blocks, so a matrix
// whose row length does not fit falls back along a chain (and says so).
//
// Ternary targets (TQ1_0, TQ2_0, I2_S) ternarize first, as BitNet b1.58 does
// (absmean over the whole tensor: ternarize.h; a tensor already of the form
// s * {-1, 0, +1} keeps its values), then store gamma * t exactly;
// their fallbacks store the same ternarized values, so a fallback changes the
// bytes, not the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ggml_types.h"
#include "core/thread_pool.h"

namespace lowbit {

// The types `lowbit quantize --type` writes.
const std::vector<GgmlType>& quantize_target_types();
bool is_ternary_type(GgmlType type);
bool is_float_type(GgmlType type);  // F32, F16, BF16

// The first type of wanted's chain whose blocks fit rows of row_length:
//   ternary:      wanted, Q2_0, Q8_0, F16 (all holding the ternarized values)
//   otherwise:    wanted, Q8_0, source
// `source` (the tensor's own float type) always fits.
GgmlType fit_type(GgmlType wanted, int64_t row_length, GgmlType source);

// A tensor as the input file holds it. shape in ggml order (shape[0] = row length).
struct TensorSource {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  int64_t n_elements() const;
};

// The tensor's values as floats [n_elements] (I2_S: times its tensor scale).
std::vector<float> dequantize_tensor(const TensorSource& t, ThreadPool& pool);

// Converts t to `to`; ternarize: absmean-ternarize the values first (for
// ternary types and their fallbacks). Returns the tensor's bytes in `to`.
std::vector<uint8_t> convert_tensor(const TensorSource& t, GgmlType to, bool ternarize, ThreadPool& pool);

}  // namespace lowbit
