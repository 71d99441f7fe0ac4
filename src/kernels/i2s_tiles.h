// The I2_S kernel layout: ternary codes (t + 1 in {0, 1, 2}, 2 bits) in tiles of
// 16 rows, interleaved for vpdpbusd (VNNI: 4 unsigned bytes x 4 signed bytes
// per 32-bit lane), so one 64-byte load feeds 16 rows and no horizontal sums
// are needed (the "VNNI4-interleaved 2-bit layout" of seeds/000).
//
//   tile  = rows 16*i .. 16*i+15          [tiles][groups][64 bytes]
//   group = columns 16*g .. 16*g+15       one 64-byte line per (tile, group)
//   byte 4*r + i of a line, bits 2j+1..2j = code of row r, column 16*g + 4*j + i
//
// so (line >> 2j) & 3 (per byte) is a vector of 16 lanes x 4 codes for the
// columns 16g+4j .. 16g+4j+3, the 4 activation bytes a lane is dotted with.
// Rows past N and columns past K hold code 0: they meet zero activations
// (ActivationBatch pads to 64) or land in rows nobody stores.
#pragma once

#include <cstdint>

#include "core/aligned_buffer.h"

namespace lowbit {

struct I2sTiles {
  static constexpr int kRows = 16;     // rows per tile (16 int32 lanes of a zmm)
  static constexpr int kColumns = 16;  // columns per 64-byte line
  static constexpr int kLineBytes = 64;

  int64_t rows = 0, cols = 0;  // N, K
  int64_t tiles = 0;           // ceil(N / 16)
  int64_t groups = 0;          // ceil(K / 16): lines per tile
  AlignedBuffer<uint8_t> data;  // [tiles][groups][64]

  I2sTiles(int64_t rows, int64_t cols);
  const uint8_t* tile(int64_t i) const { return data.data() + i * groups * kLineBytes; }
  int64_t bytes() const { return tiles * groups * kLineBytes; }
  // Stores row r's ternary values t[K] (-1, 0, +1) as codes t + 1.
  void set_row(int64_t r, const int8_t* t);
  // The code at (r, k), for tests and docs.
  int code(int64_t r, int64_t k) const;
};

}  // namespace lowbit
