#include "kernels/ternary_weights.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "quant/block_rows.h"
#include "quant/i2s.h"
#include "quant/tq1_0.h"
#include "quant/tq2_0.h"
#include "quant/weight_format.h"

namespace lowbit {

namespace {

// TQ1_0 and TQ2_0 blocks both end with their fp16 scale d.
std::optional<TernaryScale> shared_block_scale(const WeightView& w) {
  const GgmlTypeInfo& info = ggml_type_info(w.type);
  if (w.cols % info.block_size != 0) return std::nullopt;
  const int64_t blocks = w.rows * w.cols / info.block_size;
  float d = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    uint16_t h;
    std::memcpy(&h, w.data + b * info.block_bytes + info.block_bytes - 2, 2);
    const float db = fp16_to_float(h);
    if (db == 0) continue;  // an all-zero block: its d multiplies nothing
    if (d == 0) d = db;
    if (db != d || !std::isfinite(db)) return std::nullopt;
  }
  return TernaryScale{d, d};
}

std::optional<TernaryScale> f16_scale(const WeightView& w) {
  const auto* h = reinterpret_cast<const uint16_t*>(w.data);
  const int64_t n = w.rows * w.cols;
  uint16_t unit = 0;  // |s| as fp16 bits
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t a = h[i] & 0x7fff;
    if (a == 0) continue;
    if (unit == 0) unit = a;
    if (a != unit || a >= 0x7c00) return std::nullopt;
  }
  const float s = fp16_to_float(unit);
  return TernaryScale{s, s};
}

// True when none of n values (n a multiple of 128, as I2_S, TQ1_0 and TQ2_0 rows are) is above
// 1: fixed-length inner loops over a pointer nothing else writes, which GCC
// vectorizes at -O2 (this runs over every weight at load).
bool none_above_one(const int8_t* __restrict t, int64_t n) {
  uint8_t above = 0;
  for (int64_t i = 0; i < n; i += 128)
    for (int j = 0; j < 128; ++j) above |= static_cast<uint8_t>(t[i + j] > 1);
  return above == 0;
}

// A TQ1_0 / TQ2_0 row straight to values, without the float round trip: each
// block's codes - 1, or zeros where the block's d is 0 (its values are 0
// whatever its codes say). Every other block's d is the unit
// (shared_block_scale checked it), so this is what dequantizing and dividing
// by the unit gives; a TQ2_0 code 3 comes out as 2, for the caller to refuse.
template <class Block, int64_t kBlockSize, void (*Unpack)(const Block&, int8_t*)>
void unpack_ternary_blocks(const uint8_t* row, int64_t cols, int8_t* t) {
  for (int64_t i = 0; i < cols / kBlockSize; ++i) {
    const auto b = load_block<Block>(row, i);
    if ((b.d & 0x7fff) == 0)
      std::memset(t + i * kBlockSize, 0, kBlockSize);
    else
      Unpack(b, t + i * kBlockSize);
  }
}

}  // namespace

std::optional<TernaryScale> ternary_scale(const WeightView& w) {
  if (w.rows <= 0 || w.cols <= 0 || w.data == nullptr) return std::nullopt;
  switch (w.type) {
    case GgmlType::I2_S: {
      if (w.cols % 128 != 0) return std::nullopt;
      const float scale = tensor_scale(w.type, w.data, w.rows * w.cols);
      // Every output of the matrix is multiplied by it: a NaN or infinity
      // there is damage, whichever kernel runs it.
      if (!std::isfinite(scale)) fail("tensor ", w.name, " (I2_S): its scale is ", scale, ", not a finite number");
      return TernaryScale{1.0f, scale};
    }
    case GgmlType::TQ1_0:
    case GgmlType::TQ2_0:
      return shared_block_scale(w);
    case GgmlType::F16:
      return f16_scale(w);
    default:
      return std::nullopt;
  }
}

void for_each_ternary_row(const WeightView& w, const TernaryScale& s, ThreadPool& pool, int64_t row_group,
                          FunctionRef<void(int64_t, const int8_t*)> emit) {
  const WeightFormat& format = weight_format(w.type);
  auto not_ternary = [&](int64_t r, int64_t k, double v) {
    fail("tensor ", w.name, " (", ggml_type_name(w.type), "): weight [", r, "][", k, "] = ", v,
         " is not ternary (0 or +-", s.unit, ")");
  };
  pool.parallel_for(w.rows, row_group, [&](int64_t begin, int64_t end, int) {
    std::vector<float> values(static_cast<size_t>(w.cols));  // [K]
    std::vector<int8_t> t(static_cast<size_t>(w.cols));      // [K]
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* row = w.data + row_offset(w.type, w.cols, r);
      const bool codes = w.type == GgmlType::I2_S || w.type == GgmlType::TQ2_0 || w.type == GgmlType::TQ1_0;
      if (codes) {
        // Codes straight to values: no float round trip (this is most of a 2B model's load).
        if (w.type == GgmlType::I2_S) unpack_i2s(row, w.cols, t.data());
        if (w.type == GgmlType::TQ2_0)
          unpack_ternary_blocks<BlockTQ2_0, kTQ2_0BlockSize, unpack_tq2_0_block>(row, w.cols, t.data());
        if (w.type == GgmlType::TQ1_0)
          unpack_ternary_blocks<BlockTQ1_0, kTQ1_0BlockSize, unpack_tq1_0_block>(row, w.cols, t.data());
        if (!none_above_one(t.data(), w.cols))
          for (int64_t k = 0; k < w.cols; ++k)
            if (t[k] > 1) not_ternary(r, k, static_cast<double>(t[k]) * s.unit);
        emit(r, t.data());
        continue;
      }
      format.dequantize_row(row, values.data(), w.cols);
      // Branch-free: random signs would defeat the branch predictor.
      bool all_ternary = true;
      for (int64_t k = 0; k < w.cols; ++k) {
        const float v = values[k];
        const bool plus = v == s.unit, minus = v == -s.unit;
        t[k] = static_cast<int8_t>(plus - minus);
        all_ternary &= plus | minus | (v == 0);
      }
      if (!all_ternary)
        for (int64_t k = 0; k < w.cols; ++k)
          if (values[k] != 0 && values[k] != s.unit && values[k] != -s.unit) not_ternary(r, k, values[k]);
      emit(r, t.data());
    }
  });
}

}  // namespace lowbit
