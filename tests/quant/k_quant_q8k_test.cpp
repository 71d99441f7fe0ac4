// The int8-activation dots of the k-quants (quant/q2_k.h ... quant/q6_k.h) and IQ4_XS,
// checked by hand and against the float dot of the dequantized weights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/half.h"
#include "core/rng.h"
#include "quant/q2_k.h"
#include "quant/iq4_xs.h"
#include "quant/iq4_nl.h"
#include "quant/q3_k.h"
#include "quant/q4_k.h"
#include "quant/q5_k.h"
#include "quant/q6_k.h"

namespace lowbit::k_quant_q8k_test {
namespace {

// One block whose 256 weights are all (d * scale) * (value - 32).
std::vector<uint8_t> uniform_block(int value, int8_t scale, float d) {
  BlockQ6_K b{};
  for (auto& v : b.ql) v = static_cast<uint8_t>((value & 15) | (value & 15) << 4);
  const int high = value >> 4;
  for (auto& v : b.qh) v = static_cast<uint8_t>(high | high << 2 | high << 4 | high << 6);
  for (auto& s : b.scales) s = scale;
  b.d = float_to_fp16(d);
  std::vector<uint8_t> bytes(sizeof b);
  std::memcpy(bytes.data(), &b, sizeof b);
  return bytes;
}

TEST(Q6_KQ8K, ActivationsArePerBlockAbsmax) {
  std::vector<float> x(512, 0.0f);
  for (int i = 0; i < 256; ++i) x[i] = static_cast<float>(i % 7) - 3.0f;  // max |x| 3
  x[10] = -6.0f;                                                         // block 0 max: 6
  std::vector<int8_t> q(512, 99);
  float d[2];
  quantize_activations_q8k(x.data(), 512, q.data(), d);
  EXPECT_FLOAT_EQ(d[0], 6.0f / 127);
  EXPECT_EQ(q[10], -127);
  EXPECT_EQ(q[0], static_cast<int8_t>(std::nearbyint(-3.0f * 127 / 6)));  // -63.5 -> -64 (to even)
  EXPECT_EQ(d[1], 0.0f) << "a block of zeros has scale 0";
  for (int i = 256; i < 512; ++i) ASSERT_EQ(q[i], 0);
}

TEST(Q6_KQ8K, HandBlock) {
  // Weights all (0.5 * 2) * (40 - 32) = 8; activations all 1 -> q = 127, d = 1/127.
  const auto blk = uniform_block(40, 2, 0.5f);
  std::vector<float> x(256, 1.0f);
  std::vector<int8_t> q(256);
  float d;
  quantize_activations_q8k(x.data(), 256, q.data(), &d);
  const float y = dot_q6_k_q8k(blk.data(), q.data(), &d, 256);
  // I = 16 sub-blocks x scale 2 x 16 x (8 x 127); y = I * (0.5 * d).
  const int32_t expect_int = 16 * 2 * 16 * 8 * 127;
  EXPECT_EQ(y, static_cast<float>(expect_int) * (0.5f * d));
  EXPECT_NEAR(y, 256 * 8, 1e-3);
}

TEST(Q6_KQ8K, ExtremesStayExactInInt32) {
  // Values 0 (weight -32 x scale) and scales -128: the largest products there are.
  const auto blk = uniform_block(0, -128, 1.0f);
  std::vector<int8_t> q(256, -127);
  const float d = 1.0f;
  EXPECT_EQ(dot_q6_k_q8k(blk.data(), q.data(), &d, 256), static_cast<float>(256 * (-128) * (-32) * (-127)));
}

// A random row quantized to the format: its int8-activation dot is within the
// activations' rounding of the float dot of the dequantized weights, and not
// equal to it.
void expect_close_to_the_float_dot(void (*quantize_row)(const float*, uint8_t*, int64_t),
                                   void (*dequantize_row)(const uint8_t*, float*, int64_t),
                                   float (*dot)(const uint8_t*, const int8_t*, const float*, int64_t),
                                   size_t block_bytes, uint64_t seed) {
  Rng rng(seed);
  const int64_t n = 2560;
  std::vector<float> w(n), x(n), wd(n);
  for (auto& v : w) v = static_cast<float>(rng.normal());
  for (auto& v : x) v = static_cast<float>(rng.normal());
  std::vector<uint8_t> row(n / 256 * block_bytes);
  quantize_row(w.data(), row.data(), n);
  dequantize_row(row.data(), wd.data(), n);
  std::vector<int8_t> q(n);
  std::vector<float> d(n / 256);
  quantize_activations_q8k(x.data(), n, q.data(), d.data());
  double exact = 0, magnitude = 0;
  for (int64_t i = 0; i < n; ++i) exact += static_cast<double>(wd[i]) * x[i], magnitude += std::fabs(wd[i] * x[i]);
  // Each activation is off by at most half a step (max|x| / 254 per block).
  double bound = 0;
  for (int64_t i = 0; i < n; ++i) bound += std::fabs(wd[i]) * d[i / 256] / 2;
  const float y = dot(row.data(), q.data(), d.data(), n);
  EXPECT_LE(std::fabs(y - exact), bound + 1e-5 * magnitude);
  EXPECT_GT(std::fabs(y - exact), 0.0) << "int8 activations are an approximation";
}

TEST(Q6_KQ8K, CloseToTheFloatDot) {
  expect_close_to_the_float_dot(quantize_row_q6_K, dequantize_row_q6_K, dot_q6_k_q8k, sizeof(BlockQ6_K), 5);
}

// One block whose 256 values are all `value`, every sub-block scale `sc` and min `m`.
std::vector<uint8_t> uniform_q4_k_block(int value, int sc, int m, float d, float dmin) {
  BlockQ4_K b{};
  for (auto& v : b.qs) v = static_cast<uint8_t>(value | value << 4);
  for (int j = 0; j < 4; ++j) {
    b.scales[j] = static_cast<uint8_t>((sc & 63) | (sc >> 4) << 6);
    b.scales[j + 4] = static_cast<uint8_t>((m & 63) | (m >> 4) << 6);
    b.scales[j + 8] = static_cast<uint8_t>((sc & 15) | (m & 15) << 4);
  }
  b.d = float_to_fp16(d);
  b.dmin = float_to_fp16(dmin);
  for (int j = 0; j < 8; ++j) {
    int s, mm;
    q4_k_scale_min(b.scales, j, &s, &mm);
    EXPECT_EQ(s, sc);
    EXPECT_EQ(mm, m);
  }
  std::vector<uint8_t> bytes(sizeof b);
  std::memcpy(bytes.data(), &b, sizeof b);
  return bytes;
}

TEST(Q4_KQ8K, HandBlock) {
  // Weights all (0.5 * 3) * 10 - (0.25 * 1) = 14.75, as I and M:
  // I = 8 x 3 x 32 x 10 x 127, M = 8 x 1 x 32 x 127.
  const auto blk = uniform_q4_k_block(10, 3, 1, 0.5f, 0.25f);
  std::vector<float> x(256, 1.0f);
  std::vector<int8_t> q(256);
  float d;
  quantize_activations_q8k(x.data(), 256, q.data(), &d);
  const float y = dot_q4_k_q8k(blk.data(), q.data(), &d, 256);
  const int32_t i = 8 * 3 * 32 * 10 * 127, m = 8 * 1 * 32 * 127;
  EXPECT_EQ(y, static_cast<float>(i) * (0.5f * d) - static_cast<float>(m) * (0.25f * d));
  EXPECT_NEAR(y, 256 * (0.5 * 3 * 10 - 0.25), 1e-2);
}

TEST(Q4_KQ8K, ExtremesStayExactInInt32) {
  // Values 15, scales and mins 63, activations -127: the largest sums there are.
  const auto blk = uniform_q4_k_block(15, 63, 63, 1.0f, 1.0f);
  std::vector<int8_t> q(256, -127);
  const float d = 1.0f;
  const int32_t i = 256 * 63 * 15 * -127, m = 256 * 63 * -127;
  EXPECT_EQ(dot_q4_k_q8k(blk.data(), q.data(), &d, 256), static_cast<float>(i) - static_cast<float>(m));
}

TEST(Q5_KQ8K, CloseToTheFloatDot) {
  expect_close_to_the_float_dot(quantize_row_q5_K, dequantize_row_q5_K, dot_q5_k_q8k, sizeof(BlockQ5_K), 9);
}

TEST(Q4_KQ8K, CloseToTheFloatDot) {
  expect_close_to_the_float_dot(quantize_row_q4_K, dequantize_row_q4_K, dot_q4_k_q8k, sizeof(BlockQ4_K), 7);
}

TEST(Q2_KQ8K, HandBlock) {
  // Values 2, every step code 3 and min code 1, d = 0.5, dmin = 0.25: weights
  // (0.5 x 3) x 2 - 0.25 = 2.75; I = 16 x 3 x 16 x 2 x 127, M = 16 x 1 x 16 x 127.
  BlockQ2_K b{};
  for (auto& s : b.scales) s = 3 | 1 << 4;
  for (auto& v : b.qs) v = 0xAA;  // every 2-bit value 2
  b.d = float_to_fp16(0.5f);
  b.dmin = float_to_fp16(0.25f);
  std::vector<float> x(256, 1.0f);
  std::vector<int8_t> q(256);
  float d;
  quantize_activations_q8k(x.data(), 256, q.data(), &d);
  const float y = dot_q2_k_q8k(reinterpret_cast<const uint8_t*>(&b), q.data(), &d, 256);
  const int32_t i = 16 * 3 * 16 * 2 * 127, m = 16 * 1 * 16 * 127;
  EXPECT_EQ(y, static_cast<float>(i) * (0.5f * d) - static_cast<float>(m) * (0.25f * d));
  EXPECT_NEAR(y, 256 * 2.75, 1e-2);
}

TEST(Q2_KQ8K, ExtremesStayExactInInt32) {
  // Values 3, step and min codes 15, activations -128: the largest sums there are.
  BlockQ2_K b{};
  for (auto& s : b.scales) s = 0xFF;
  for (auto& v : b.qs) v = 0xFF;
  b.d = b.dmin = float_to_fp16(1.0f);
  std::vector<int8_t> q(256, -128);
  const float d = 1.0f;
  const int32_t i = 256 * 15 * 3 * -128, m = 256 * 15 * -128;
  EXPECT_EQ(dot_q2_k_q8k(reinterpret_cast<const uint8_t*>(&b), q.data(), &d, 256),
            static_cast<float>(i) - static_cast<float>(m));
}

TEST(Q2_KQ8K, CloseToTheFloatDot) {
  expect_close_to_the_float_dot(quantize_row_q2_K, dequantize_row_q2_K, dot_q2_k_q8k, sizeof(BlockQ2_K), 11);
}

TEST(Q3_KQ8K, HandBlock) {
  // Every value 2 (low bits 2, high bit set: no -4), every scale code 35
  // (scale 3), d = 0.5: weights (0.5 x 3) x 2 = 3; I = 16 x 3 x 16 x 2 x 127.
  BlockQ3_K b{};
  for (auto& h : b.hmask) h = 0xFF;
  for (auto& v : b.qs) v = 0xAA;
  for (int s = 0; s < 8; ++s) b.scales[s] = 0x33;        // low 4 bits 3 (two codes a byte)
  for (int s = 8; s < 12; ++s) b.scales[s] = 0xAA;       // high 2 bits 2 (four codes a byte)
  b.d = float_to_fp16(0.5f);
  std::vector<float> x(256, 1.0f);
  std::vector<int8_t> q(256);
  float d;
  quantize_activations_q8k(x.data(), 256, q.data(), &d);
  const float y = dot_q3_k_q8k(reinterpret_cast<const uint8_t*>(&b), q.data(), &d, 256);
  EXPECT_EQ(y, static_cast<float>(16 * 3 * 16 * 2 * 127) * (0.5f * d));
  EXPECT_NEAR(y, 256 * 3, 1e-2);
}

TEST(Q3_KQ8K, ExtremesStayExactInInt32) {
  // Values -4 (no bits set), scale codes 0 (scale -32), activations -128.
  BlockQ3_K b{};
  b.d = float_to_fp16(1.0f);
  std::vector<int8_t> q(256, -128);
  const float d = 1.0f;
  EXPECT_EQ(dot_q3_k_q8k(reinterpret_cast<const uint8_t*>(&b), q.data(), &d, 256),
            static_cast<float>(256 * -32 * -4 * -128));
}

TEST(Q3_KQ8K, CloseToTheFloatDot) {
  expect_close_to_the_float_dot(quantize_row_q3_K, dequantize_row_q3_K, dot_q3_k_q8k, sizeof(BlockQ3_K), 13);
}

TEST(Iq4XsQ8K, HandBlock) {
  // Sub-block j has index j + 8 (codebook value kIq4NlValues[j + 8] > 0) and
  // scale code 33 + j (scale j + 1); d = 0.25; activations all 1 (q = 127).
  BlockIq4Xs b{};
  b.d = float_to_fp16(0.25f);
  for (int j = 0; j < 8; ++j) {
    const int code = 33 + j;
    b.scales_l[j / 2] = static_cast<uint8_t>(b.scales_l[j / 2] | (code & 15) << (4 * (j % 2)));
    b.scales_h = static_cast<uint16_t>(b.scales_h | (code >> 4) << (2 * j));
    for (int l = 0; l < 16; ++l) b.qs[16 * j + l] = static_cast<uint8_t>((j + 8) | (j + 8) << 4);
  }
  std::vector<float> x(256, 1.0f);
  std::vector<int8_t> q(256);
  float d;
  quantize_activations_q8k(x.data(), 256, q.data(), &d);
  int32_t want = 0;
  float weights = 0;
  for (int j = 0; j < 8; ++j) {
    want += (j + 1) * 32 * kIq4NlValues[j + 8] * 127;
    weights += 32 * 0.25f * static_cast<float>((j + 1) * kIq4NlValues[j + 8]);
  }
  const float y = dot_iq4_xs_q8k(reinterpret_cast<const uint8_t*>(&b), q.data(), &d, 256);
  EXPECT_EQ(y, static_cast<float>(want) * (0.25f * d));
  EXPECT_NEAR(y, weights, 1e-2);
}

TEST(Iq4XsQ8K, ExtremesStayExactInInt32) {
  // Every index 0 (-127), every scale code 0 (scale -32), activations -128.
  BlockIq4Xs b{};
  b.d = float_to_fp16(1.0f);
  std::vector<int8_t> q(256, -128);
  const float d = 1.0f;
  EXPECT_EQ(dot_iq4_xs_q8k(reinterpret_cast<const uint8_t*>(&b), q.data(), &d, 256),
            static_cast<float>(256 * -32 * -127 * -128));
}

TEST(Iq4XsQ8K, CloseToTheFloatDot) {
  expect_close_to_the_float_dot(quantize_row_iq4_xs, dequantize_row_iq4_xs, dot_iq4_xs_q8k, sizeof(BlockIq4Xs), 17);
}

}  // namespace
}  // namespace lowbit::k_quant_q8k_test
