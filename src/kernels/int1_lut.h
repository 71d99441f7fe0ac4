// "int1_lut": +-1 weights (Q1_0) multiplied by table lookup instead of being
// up-converted. Each 4 weights of a row are a 4-bit index into a 16-entry
// table of the token's 4 activations; vpshufb looks up 16 rows' entries per
// 128-bit lane at once (bitnet.cpp's TL idea, applied to 1-bit weights), so
// one lookup does the work of 4 expanded bytes and 4 products.
//
// Layout: Vnni4Bits::OneLookup (vnni4_layout.h), 16 k per 32-byte step. Every
// kernel computes, per row and group, D_g = sum of x over the k whose bit is 1
// and I_g = 2 D_g - S_g, as the int1 kernels do: the same bits as the
// reference.
//
// A token's tables (ActivationBatch::token_tables), 128 bytes per unit of 16 k
// (unit u = k 16u .. 16u + 15, quad q = k 16u + 4q .. 16u + 4q + 3):
//   [0, 32)    low bytes of the entries of quad 0 | quad 2 (one 16-byte table per 128-bit lane)
//   [32, 64)   high bytes of quad 0 | quad 2
//   [64, 96)   low bytes of quad 1 | quad 3
//   [96, 128)  high bytes of quad 1 | quad 3
// where quad q's entry e is the sum of x[16u + 4q + j] over the bits j set in
// e: an int16 in -512 .. 508, kept as two bytes because vpshufb looks up bytes.
#pragma once

#include <cstdint>

#include "kernels/vnni4_layout.h"

namespace lowbit {

inline constexpr int64_t kInt1LutUnitK = 16;
inline constexpr int64_t kInt1LutUnitBytes = 128;

// Bytes of one token's tables for k activations (k rounded up to 16 k).
inline int64_t int1_lut_table_bytes(int64_t k) { return (k + kInt1LutUnitK - 1) / kInt1LutUnitK * kInt1LutUnitBytes; }

// One token's tables from its int8 activations x[k] (read up to k rounded up
// to 16, which ActivationBatch's zero padding allows): the scalar reference
// and the AVX2 builder (x86_avx2/int1_lut_avx2.cpp), bitwise the same.
void int1_lut_tables_ref(const int8_t* x, int64_t k, uint8_t* out);
void int1_lut_tables_avx2(const int8_t* x, int64_t k, uint8_t* out);

// One row block times one token (t.tables set), and times 2..4 tokens with
// each token's out bitwise what the one-token kernel gives.
void int1_lut_gemv_avx2(const Vnni4Task& t);
void int1_lut_tokens_avx2(const Vnni4Task* tasks, int count);

}  // namespace lowbit
