// The TL2V kernel layout: bitnet.cpp's TL2 encoding of ternary weights (a
// triple -> 1 sign bit + a 4-bit index of its mirror-consolidated form, 5 bits
// for 3 weights) arranged so that the weights are up-converted back to codes
// in registers and dotted with vpdpbusd, as the AI-PC paper does for 2-bit
// codes. TL2's lookup tables of activation sums are not used: a decode step
// reads 1.67 bits per weight instead of I2_S's 2, with the int8 dot products
// of the i2s kernel (lossless, bit-exact with the reference).
//
// A tile is 16 rows (the 16 int32 lanes of a zmm). K is split as TL2 splits it
// (block-fitting): columns [0, three_cols) in blocks of 96 columns, the rest
// in I2S lines of 16 columns (i2s_tiles.h).
//
//   tile  = [blocks][320 bytes] then [tail_lines][64 bytes]
//   block = 8 steps of 12 columns; step s covers columns 96b + 12s .. +11
//     bytes   0..255: 4 index lines; byte 4r+j of line m holds the index of
//                     triple (r, step 2m, j) in its low nibble and of triple
//                     (r, step 2m+1, j) in its high nibble
//     bytes 256..319: 8 little-endian uint64 sign words; bit 4r+j of word s is
//                     the sign bit of triple (r, s, j)
//   triple (r, s, j) = row r's weights at columns 12s + j + 4i, i = 0, 1, 2
//
// So for one step, the 64 index nibbles looked up in one table (vpermb) give
// 64 bytes c0 | c1 << 2 | c2 << 4 (c = t + 1, the canonical triple's codes); a
// set sign bit turns that byte into 42 - byte (each 2-bit field c into 2 - c,
// no borrows); the field i of byte 4r+j is the code of column 12s + 4i + j, so
// masking field i in place gives a VNNI4 vector (times 4^i) whose lane r meets
// the 4 activations 12s + 4i .. +3.
//
// Index of a triple: as TL2 (tl_tiles.h): the triple or its negation has its
// first nonzero weight positive; that canonical triple c has base-3 number
// n = 9(c0+1) + 3(c1+1) + (c2+1) in 13..26, index = n - 13, sign = negated.
// Rows past N hold zero triples (index 0, sign 0); tail columns past K hold
// code 0 and meet zero activations (ActivationBatch pads with zeros).
#pragma once

#include <cstdint>

#include "core/aligned_buffer.h"

namespace lowbit {

struct Tl2vTiles {
  static constexpr int kRows = 16;
  static constexpr int kBlockColumns = 96;
  static constexpr int kBlockBytes = 320;
  static constexpr int kStepColumns = 12;
  static constexpr int kTailColumns = 16;  // per I2S tail line
  static constexpr int kLineBytes = 64;

  int64_t rows = 0, cols = 0;  // N, K
  int64_t blocks = 0;          // floor(K / 96): blocks per tile
  int64_t three_cols = 0;      // 96 * blocks
  int64_t tail_lines = 0;      // ceil((K - three_cols) / 16)
  int64_t tiles = 0;           // ceil(N / 16)
  int64_t tile_bytes = 0;
  AlignedBuffer<uint8_t> data;  // [tiles][tile_bytes]

  Tl2vTiles(int64_t rows, int64_t cols);
  const uint8_t* tile(int64_t i) const { return data.data() + i * tile_bytes; }
  int64_t bytes() const { return tiles * tile_bytes; }
  // Stores row r's ternary values t[K]. Rows of one tile must be stored by one thread.
  void set_row(int64_t r, const int8_t* t);
  // Row r's value at column k, decoded back (for tests).
  int weight(int64_t r, int64_t k) const;
};

// The 64-byte vpermb table: entry e is c0 | c1 << 2 | c2 << 4 for the
// canonical triple of index e % 16 (vpermb reads 6 index bits; repeating the
// 16 entries lets it ignore the other nibble's low bits, so no mask is needed).
struct Tl2vTable {
  alignas(64) uint8_t triple[64];
};
const Tl2vTable& tl2v_table();
// The byte of a negated triple: each field c becomes 2 - c.
inline constexpr uint8_t kTl2vNegate = 0b101010;

}  // namespace lowbit
