// Q6_K row . int8 activations with AVX-512 VNNI: a block's 256 6-bit values
// become four 64-byte vectors (the Q6_K bit layout, quant/q6_k.h), each one
// vpdpbusd with its 64 activations. Lane l of chunk i then holds the dot of 4
// values of sub-block 4i + l/4: subtract 32 x their activation sum, multiply
// by the sub-block's scale, add up the block exactly, then scale in float.
#include <immintrin.h>

#include <cstring>

#include "core/half.h"
#include "kernels/k_quant_q8k.h"
#include "kernels/x86_avx512/int8_dot_avx512.h"
#include "kernels/x86_avx512/simd_avx512.h"
#include "quant/q6_k.h"

namespace lowbit {

float q6_k_q8k_row_avx512(const uint8_t* row, int64_t blocks, const int8_t* q, const int32_t* xsum32,
                          const float* dx) {
  // Byte l of pattern i = 4i + l/4: sub-block scales spread over the lanes of chunk i.
  const __m128i spread[4] = {_mm_set_epi8(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
                             _mm_set_epi8(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4),
                             _mm_set_epi8(11, 11, 11, 11, 10, 10, 10, 10, 9, 9, 9, 9, 8, 8, 8, 8),
                             _mm_set_epi8(15, 15, 15, 15, 14, 14, 14, 14, 13, 13, 13, 13, 12, 12, 12, 12)};
  float y = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = row + b * static_cast<int64_t>(sizeof(BlockQ6_K));
    const int8_t* qb = q + b * kQ6_KBlockSize;
    const int32_t* sb = xsum32 + b * (kQ6_KBlockSize / 4);
    const __m128i scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + offsetof(BlockQ6_K, scales)));
    __m512i sum = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      __m512i v[2];
      simd::q6_k_half_values(block, h, v[0], v[1]);
      for (int c = 0; c < 2; ++c) {
        const int i = 2 * h + c;  // chunk: elements 64i .. 64i + 63 of the block
        __m512i d = avx512::dot_u8s8<true>(_mm512_setzero_si512(), v[c], _mm512_loadu_si512(qb + 64 * i));
        d = _mm512_sub_epi32(d, _mm512_loadu_si512(sb + 16 * i));
        const __m512i sc = _mm512_cvtepi8_epi32(_mm_shuffle_epi8(scales, spread[i]));
        sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(d, sc));
      }
    }
    uint16_t d16;
    std::memcpy(&d16, block + offsetof(BlockQ6_K, d), 2);
    const float s = fp16_to_float(d16) * dx[b];
    y += static_cast<float>(_mm512_reduce_add_epi32(sum)) * s;
  }
  return y;
}

}  // namespace lowbit
