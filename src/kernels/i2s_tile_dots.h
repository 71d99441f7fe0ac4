// The inner loops of the I2_S kernel (ISA code in x86_avx2/, x86_avx512/ and arm_neon/),
// called only after run-time CPU detection.
#pragma once

#include <cstdint>

namespace lowbit {

// Up to kI2sMaxTokens tokens per call: each weight line is decoded once and
// dotted with every token's activations from registers.
inline constexpr int kI2sMaxTokens = 8;

// For one tile of I2sTiles (16 rows, `groups` 64-byte lines) and `tokens` tokens:
//   out[t][r] = sum_k code(r, k) * q[t * q_stride + k]   (codes unsigned, 0..2)
// int32, exact; the caller subtracts sum(q) to get sum_k t_rk * q_k.
// q rows must be readable for 16 * groups bytes.
using I2sTileDots = void (*)(const uint8_t* tile, int64_t groups, const int8_t* q, int64_t q_stride, int tokens,
                             int32_t* out /* [tokens][16] */);

// One token, two tiles of the same width read side by side (two weight
// streams, where the caller takes them far apart): out[0..15] are tile_a's
// dots, out[16..31] tile_b's, as I2sTileDots gives them.
using I2sPairDots = void (*)(const uint8_t* tile_a, const uint8_t* tile_b, int64_t groups, const int8_t* q,
                             int32_t* out /* [2][16] */);

// 2 to kI2sMaxPairTokens tokens, two tiles of the same width read side by
// side: out[(u * tokens + t) * 16 + r] is tile u's (a: 0, b: 1) dot of row r
// with token t (q rows q_stride apart), as I2sTileDots gives them.
inline constexpr int kI2sMaxPairTokens = 8;
using I2sPairTokenDots = void (*)(const uint8_t* tile_a, const uint8_t* tile_b, int64_t groups, const int8_t* q,
                                  int64_t q_stride, int tokens, int32_t* out /* [2][tokens][16] */);

// vnni: vpdpbusd (AVX512-VNNI / AVX-VNNI); otherwise vpmaddubsw + vpmaddwd.
// prefetch: the one-token loop prefetches ahead in software (Intel's cores
// keep too few loads in flight without it; AMD's streamed slower with it).
I2sTileDots i2s_tile_dots_avx512(bool vnni, bool prefetch);
I2sTileDots i2s_tile_dots_avx2(bool vnni);
// Plain AVX2 only (nullptr with VNNI: there the one-token loop has no pair form).
I2sPairDots i2s_pair_dots_avx2(bool vnni);
// AVX-512, with the one-token loop's software prefetch (used on Intel). Rows
// up to 2^18 columns (the one-token loop's bound; spans keep them shorter).
I2sPairDots i2s_pair_dots_avx512(bool vnni);
I2sPairTokenDots i2s_pair_token_dots_avx512(bool vnni);
// sdot with a lane operand: each 32-bit lane of codes times 4 activation bytes.
I2sTileDots i2s_tile_dots_neon();

}  // namespace lowbit
