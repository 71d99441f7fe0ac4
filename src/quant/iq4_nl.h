// IQ4_NL (ggml type 20), llama.cpp's layout: blocks of 32 elements, each an
// fp16 scale d followed by 16 bytes holding the elements' 4-bit indices in
// Q4_0's order (byte j: element j in the low nibble, element j + 16 in the
// high one); element = d * kIq4NlValues[index], a fixed non-uniform codebook
// that is denser near zero, where most weights are.
#pragma once

#include <array>
#include <cstdint>

namespace lowbit {

constexpr int64_t kIq4NlBlockSize = 32;

// llama.cpp's kvalues_iq4nl.
inline constexpr std::array<int8_t, 16> kIq4NlValues = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                        1,    13,   25,  38,  53,  69,  89,  113};

struct BlockIq4Nl {
  uint16_t d;                       // fp16 scale
  uint8_t qs[kIq4NlBlockSize / 2];  // [16] low nibble: element j, high nibble: element j + 16
};
static_assert(sizeof(BlockIq4Nl) == 18, "IQ4_NL block is 18 bytes in GGUF");

// The index of the codebook value nearest to v (the lower one on a tie).
int iq4_nl_nearest_index(float v);
// The block's 32 codebook values in element order.
void unpack_iq4_nl_block(const BlockIq4Nl& b, int8_t* v);

void dequantize_row_iq4_nl(const uint8_t* row, float* dst, int64_t n);
// lowbit's own quantizer (the format, not llama.cpp's search): per block, a
// few scales that put the largest-magnitude element at or near the codebook's
// ends are tried; each maps every element to its nearest codebook value and
// refits d by least squares; the one with the least squared error is kept.
void quantize_row_iq4_nl(const float* src, uint8_t* row, int64_t n);
// sum over blocks, in order, of float(d) * float(sum_j value_j * q[j]).
float dot_i8_iq4_nl(const uint8_t* row, const int8_t* q, int64_t n);

}  // namespace lowbit
