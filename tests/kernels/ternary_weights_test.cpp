// for_each_ternary_row: what every ternary kernel repacks at load. I2_S, TQ1_0
// and TQ2_0 rows are read straight from their codes (no float round trip), so
// these tests hold those paths to the values, the zero-scale blocks and the
// refusals that dequantizing gives.
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/ternary_weights.h"
#include "ternary_test_support.h"

namespace lowbit {
namespace {

using test::encode_ternary;
using test::random_ternary;

constexpr int64_t kTq2BlockBytes = 66;  // 64 bytes of codes, then fp16 d

// Every row as for_each_ternary_row emits it, row-major.
std::vector<int8_t> rows_of(const WeightView& w, ThreadPool& pool) {
  const auto s = ternary_scale(w);
  EXPECT_TRUE(s.has_value()) << w.name;
  std::vector<int8_t> out(static_cast<size_t>(w.rows * w.cols), 99);
  std::mutex m;
  for_each_ternary_row(w, *s, pool, 1, [&](int64_t r, const int8_t* t) {
    std::lock_guard<std::mutex> lock(m);
    std::memcpy(out.data() + r * w.cols, t, static_cast<size_t>(w.cols));
  });
  return out;
}

// Sets weight (r, k) of a TQ2_0 tensor of K columns to code c: element e of a
// block sits in byte 32 * (e / 128) + e % 32 at bits 2 * (e % 128 / 32).
void set_tq2_0_code(std::vector<uint8_t>& bytes, int64_t cols, int64_t r, int64_t k, int code) {
  const int64_t block = (r * cols + k) / 256, e = k % 256;
  uint8_t& byte = bytes[static_cast<size_t>(block * kTq2BlockBytes + 32 * (e / 128) + e % 32)];
  const int shift = static_cast<int>(2 * (e % 128 / 32));
  byte = static_cast<uint8_t>((byte & ~(3 << shift)) | code << shift);
}

TEST(TernaryWeights, RowsOfEveryTernaryTypeAreTheirValues) {
  ThreadPool pool(2);
  const int64_t n = 7, k = 768;
  const auto t = random_ternary(n, k, 41);
  for (GgmlType type : {GgmlType::I2_S, GgmlType::TQ1_0, GgmlType::TQ2_0, GgmlType::F16}) {
    const auto bytes = encode_ternary(type, t, n, k, 0.3125f);
    const WeightView w{"w", type, n, k, bytes.data()};
    EXPECT_EQ(rows_of(w, pool), t) << ggml_type_name(type);
  }
}

// A block whose d is 0 holds zeros whatever its codes (dequantizing gives
// 0 * (code - 1)), code 3 included.
TEST(TernaryWeights, BlockWithZeroScaleReadsAsZeros) {
  ThreadPool pool(2);
  const int64_t n = 3, k = 512;  // 2 blocks per row
  auto t = random_ternary(n, k, 42);
  auto bytes = encode_ternary(GgmlType::TQ2_0, t, n, k, 0.75f);
  const int64_t block = 3;  // row 1, columns 256..511
  for (int64_t i = 0; i < 64; ++i) bytes[static_cast<size_t>(block * kTq2BlockBytes + i)] = static_cast<uint8_t>(37 * i + 3);
  std::memset(&bytes[static_cast<size_t>(block * kTq2BlockBytes + 64)], 0, 2);
  for (int64_t c = 256; c < 512; ++c) t[static_cast<size_t>(k + c)] = 0;
  const WeightView w{"zero-block", GgmlType::TQ2_0, n, k, bytes.data()};
  EXPECT_EQ(rows_of(w, pool), t);
}

// A stray code 3 (+2 units) is refused, naming the tensor and the weight.
TEST(TernaryWeights, StrayCodeIsRefusedNamingTheWeight) {
  ThreadPool pool(2);
  const int64_t n = 4, k = 256, r = 2, c = 161;
  const auto t = random_ternary(n, k, 43);
  for (GgmlType type : {GgmlType::I2_S, GgmlType::TQ2_0}) {
    auto bytes = encode_ternary(type, t, n, k, 1.0f);
    if (type == GgmlType::I2_S) {
      const int64_t at = r * k + c;  // flattened: byte 32 * (at / 128) + at % 32, bits 6 - 2 * (at % 128 / 32)
      bytes[static_cast<size_t>(at / 128 * 32 + at % 32)] |= static_cast<uint8_t>(3 << (6 - 2 * (at % 128 / 32)));
    } else {
      set_tq2_0_code(bytes, k, r, c, 3);
    }
    const WeightView w{"blk.9.ffn_up.weight", type, n, k, bytes.data()};
    try {
      rows_of(w, pool);
      ADD_FAILURE() << ggml_type_name(type) << ": a code 3 was accepted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("blk.9.ffn_up.weight"), std::string::npos) << what;
      EXPECT_NE(what.find("[2][161]"), std::string::npos) << what;
      EXPECT_NE(what.find("not ternary"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace lowbit
