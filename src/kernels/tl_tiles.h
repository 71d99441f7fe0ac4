// The TL1 / TL2 kernel layouts (bitnet.cpp's element-wise lookup tables, built
// here at load for any shape). Weights are stored as indices into per-column-
// group tables of activation sums, so a GEMV is table lookups (vpshufb) and
// adds, with no multiplies:
//
//   TL1: a pair (w0, w1) of one row     -> index 3(w0+1) + (w1+1)    in 0..8
//   TL2: a triple (w0, w1, w2)          -> sign bit + index in 0..13: the
//        triple or its negation (mirror consolidation) has its first nonzero
//        weight positive; that canonical triple c has base-3 number
//        n = 9(c0+1) + 3(c1+1) + (c2+1) in 13..26, index = n - 13, and the
//        sign bit says whether the stored weights are -c.
//
// K is split (block-fitting weight splitting): columns [0, three_cols) in
// triples (TL2 only; three_cols = 6 * floor(K / 6)), the rest in pairs.
// A tile is 64 rows; a step covers two column groups (2 triples or 2 pairs):
//
//   tile = [tl2_steps][64]   index bytes: byte r = row r; low nibble = group
//                            2s, high nibble = group 2s+1
//          [tl2_steps][16]   sign words: uint64 for group 2s, then 2s+1
//          (zero pad to 64)
//          [tl1_steps][64]   index bytes of the pairs, as above
//
// Sign bit b of a word is the row of int16 lane b % 32 of the "lo" (b < 32) or
// "hi" (b >= 32) vector that vpunpck{l,h}bw make from a lookup, which is
// tl_row_of_lane(b / 32, b % 32). Columns past K hold the zero weights (TL1
// index 4, TL2 index 0 with sign 0).
#pragma once

#include <array>
#include <cstdint>

#include "core/aligned_buffer.h"

namespace lowbit {

// Row (0..63) of lane `lane` (0..31) of the int16 vector made by vpunpcklbw
// (half 0) or vpunpckhbw (half 1) from 64 looked-up bytes in row order: each
// 128-bit lane of 16 rows gives rows 0-7 to the lo and 8-15 to the hi vector.
constexpr int tl_row_of_lane(int half, int lane) { return 16 * (lane / 8) + 8 * half + lane % 8; }

struct TlTiles {
  static constexpr int kRows = 64;
  static constexpr int kTl1Zero = 4;  // TL1 index of (0, 0)

  int64_t rows = 0, cols = 0;  // N, K
  int64_t three_cols = 0;      // columns in triples
  int64_t tl2_steps = 0;       // three_cols / 6
  int64_t tl1_steps = 0;       // ceil((K - three_cols) / 4)
  int64_t tiles = 0;           // ceil(N / 64)
  int64_t tile_bytes = 0;
  AlignedBuffer<uint8_t> data;  // [tiles][tile_bytes]

  // with_triples: TL2 (split K as above); otherwise TL1 (all pairs).
  TlTiles(int64_t rows, int64_t cols, bool with_triples);
  const uint8_t* tile(int64_t i) const { return data.data() + i * tile_bytes; }
  int64_t bytes() const { return tiles * tile_bytes; }
  int64_t tl2_groups() const { return 2 * tl2_steps; }
  int64_t tl1_groups() const { return 2 * tl1_steps; }
  // Offsets inside a tile of the three planes.
  int64_t sign_offset() const { return tl2_steps * 64; }
  int64_t tl1_offset() const { return (sign_offset() + tl2_steps * 16 + 63) / 64 * 64; }

  // Stores row r's ternary values t[K]. Rows of one tile must be stored by one thread.
  void set_row(int64_t r, const int8_t* t);
  // Row r's value at column k, decoded back (for tests).
  int weight(int64_t r, int64_t k) const;
};

// A triple's TL2 encoding by table, indexed by its base-3 number
// 9 (w0 + 1) + 3 (w1 + 1) + (w2 + 1): index in bits 0-3, sign in bit 4 (set
// when the first nonzero weight is negative: the index is then the negated
// triple's). Branch-free: random weights mispredicted a branch on the sign,
// and encoding was most of a 2B model's load with a TL kernel. tl2v encodes
// its triples the same way.
const std::array<uint8_t, 27>& tl2_encode_table();

// The weights of index i: TL1 pair (i < 9), TL2 canonical triple (i < 14).
void tl1_pair_of_index(int i, int w[2]);
void tl2_triple_of_index(int i, int w[3]);

}  // namespace lowbit
