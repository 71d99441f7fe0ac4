#include "quant/i2s.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "quant/block_rows.h"

namespace lowbit {

namespace {

constexpr int64_t kGroup = kI2SBlockSize / 4;  // weights sharing a bit position

// Byte and bit shift of weight w of the tensor (layout in i2s.h).
int64_t code_byte(int64_t w) { return (w / kI2SBlockSize) * kI2SBlockBytes + w % kGroup; }
int code_shift(int64_t w) { return 6 - 2 * static_cast<int>((w % kI2SBlockSize) / kGroup); }

int8_t ternary_at(const uint8_t* codes, int64_t w) {
  return static_cast<int8_t>(((codes[code_byte(w)] >> code_shift(w)) & 3) - 1);
}

// Writes the n/4 code bytes; ternary_of(w) gives weight w's value in {-1, 0, 1}.
template <class TernaryOf>
void write_codes(int64_t n, uint8_t* dst, TernaryOf ternary_of) {
  std::memset(dst, 0, static_cast<size_t>(n / 4));
  for (int64_t w = 0; w < n; ++w) dst[code_byte(w)] |= static_cast<uint8_t>((ternary_of(w) + 1) << code_shift(w));
}

// One block's 128 codes plus kOffset (-1: values), byte by byte: the same
// mapping as ternary_at, in a loop of fixed length over pointers that cannot
// alias, which GCC vectorizes at -O2 (this runs over every weight at load;
// left scalar it took 1.9 cycles per weight).
template <int kOffset, class Out>
void unpack_block(const uint8_t* __restrict in, Out* __restrict out) {
  for (int i = 0; i < kGroup; ++i) {
    out[i] = static_cast<Out>(((in[i] >> 6) & 3) + kOffset);
    out[kGroup + i] = static_cast<Out>(((in[i] >> 4) & 3) + kOffset);
    out[2 * kGroup + i] = static_cast<Out>(((in[i] >> 2) & 3) + kOffset);
    out[3 * kGroup + i] = static_cast<Out>((in[i] & 3) + kOffset);
  }
}

}  // namespace

void pack_i2s(const int8_t* ternary, int64_t n, float scale, uint8_t* dst) {
  check_row_length("i2_s", n, kI2SBlockSize);
  for (int64_t w = 0; w < n; ++w)
    if (ternary[w] < -1 || ternary[w] > 1)
      fail("i2_s: weight ", w, " is ", static_cast<int>(ternary[w]), ", not -1, 0 or +1");
  write_codes(n, dst, [&](int64_t w) { return ternary[w]; });
  std::memset(dst + n / 4, 0, kI2STrailerBytes);
  std::memcpy(dst + n / 4, &scale, sizeof scale);
}

void unpack_i2s(const uint8_t* src, int64_t n, int8_t* ternary) {
  check_row_length("i2_s", n, kI2SBlockSize);
  for (int64_t b = 0; b < n / kI2SBlockSize; ++b)
    unpack_block<-1>(src + b * kI2SBlockBytes, ternary + b * kI2SBlockSize);
}

void unpack_i2s_codes(const uint8_t* src, int64_t n, uint8_t* codes) {
  check_row_length("i2_s", n, kI2SBlockSize);
  for (int64_t b = 0; b < n / kI2SBlockSize; ++b) unpack_block<0>(src + b * kI2SBlockBytes, codes + b * kI2SBlockSize);
}

float i2s_tensor_scale(const uint8_t* tensor, int64_t n) {
  check_row_length("i2_s", n, kI2SBlockSize);
  float scale;
  std::memcpy(&scale, tensor + n / 4, sizeof scale);
  return scale;
}

int32_t dot_i2s_int(const uint8_t* row, const int8_t* q, int64_t n) {
  check_row_length("i2_s", n, kI2SBlockSize);
  int32_t sum = 0;
  for (int64_t w = 0; w < n; ++w) sum += ternary_at(row, w) * q[w];
  return sum;
}

void dequantize_row_i2s(const uint8_t* row, float* dst, int64_t n) {
  check_row_length("i2_s", n, kI2SBlockSize);
  for (int64_t w = 0; w < n; ++w) dst[w] = ternary_at(row, w);
}

void quantize_row_i2s(const float* src, uint8_t* row, int64_t n) {
  check_row_length("i2_s", n, kI2SBlockSize);
  write_codes(n, row, [&](int64_t w) {
    const double x = src[w];
    if (std::fabs(x) < 1e-6) return 0;
    return x > 0 ? 1 : -1;
  });
}

float dot_i8_i2s(const uint8_t* row, const int8_t* q, int64_t n) { return static_cast<float>(dot_i2s_int(row, q, n)); }

}  // namespace lowbit
