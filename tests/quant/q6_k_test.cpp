#include "quant/q6_k.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "quant_test_util.h"

namespace lowbit::q6_k_test {
namespace {

constexpr int64_t kBytes = 210;  // ql[128], qh[64], scales[16], fp16 d

// Element e of a block, from llama.cpp's layout description: half h = e / 128;
// within it r = e % 128, l = r % 32, quarter k = r / 32. Low 4 bits: nibble k / 2
// of ql[64h + l + 32 (k % 2)]; high 2 bits: bits 2k of qh[32h + l]; scale
// scales[8h + l / 16 + 2k].
double expected(const uint8_t* blk, int64_t e) {
  const int64_t h = e / 128, r = e % 128, l = r % 32, k = r / 32;
  const uint8_t low_byte = blk[64 * h + l + 32 * (k % 2)];
  const int low = k / 2 ? low_byte >> 4 : low_byte & 15;
  const int high = (blk[128 + 32 * h + l] >> (2 * k)) & 3;
  const int scale = static_cast<int8_t>(blk[192 + 8 * h + l / 16 + 2 * k]);
  return static_cast<double>(test::le_fp16(blk + 208)) * scale * ((low | high << 4) - 32);
}

TEST(Q6_KReference, DequantizeFollowsLlamaCppLayout) {
  Rng rng(61);
  const int64_t blocks = 4;
  auto row = test::random_bytes(rng, blocks * kBytes);
  for (int64_t b = 0; b < blocks; ++b) test::put_le16(&row[b * kBytes + 208], test::random_fp16_scale(rng));
  std::vector<float> y(blocks * 256);
  dequantize_row_q6_K(row.data(), y.data(), blocks * 256);
  // d * scale is exact in float, so the float result is the double product rounded once.
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t e = 0; e < 256; ++e)
      ASSERT_EQ(y[b * 256 + e], static_cast<float>(expected(&row[b * kBytes], e))) << b << " " << e;
}

TEST(Q6_KReference, ExtremeCodesAndScales) {
  for (uint16_t d : test::kExtremeFp16Scales) {
    std::vector<uint8_t> row(kBytes);
    for (int i = 0; i < 128; ++i) row[i] = i % 2 ? 0xff : 0x00;  // low bits all ones / zeros
    for (int i = 128; i < 192; ++i) row[i] = i % 2 ? 0xff : 0x00;
    for (int i = 192; i < 208; ++i) row[i] = static_cast<uint8_t>(i % 2 ? 127 : -128);
    test::put_le16(&row[208], d);
    std::vector<float> y(256);
    dequantize_row_q6_K(row.data(), y.data(), 256);
    for (int e = 0; e < 256; ++e) ASSERT_EQ(y[e], static_cast<float>(expected(row.data(), e))) << d << " " << e;
  }
}

TEST(Q6_KReference, RejectsPartialBlocks) {
  std::vector<uint8_t> row(kBytes);
  std::vector<float> y(256);
  EXPECT_THROW(dequantize_row_q6_K(row.data(), y.data(), 128), Error);
}

}  // namespace
}  // namespace lowbit::q6_k_test
