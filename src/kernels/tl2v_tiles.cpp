#include "kernels/tl2v_tiles.h"

#include <array>
#include <cstring>

#include "kernels/tl_tiles.h"
#include "kernels/two_bit_word.h"

namespace lowbit {

namespace {

// Bit 0 of each byte of x (the others clear) gathered into a nibble: the
// multiply moves bytes 0, 1, 2, 3's bit to bits 21, 22, 23, 24, and no two
// partial products meet, so nothing carries.
unsigned byte_bits_nibble(uint32_t x) { return static_cast<unsigned>((uint64_t{x} * 0x204081u) >> 21) & 0xFu; }

}  // namespace

const Tl2vTable& tl2v_table() {
  static const Tl2vTable table = [] {
    Tl2vTable t{};
    for (int e = 0; e < 64; ++e) {
      if (e % 16 >= 14) continue;  // no such index
      int w[3];
      tl2_triple_of_index(e % 16, w);
      t.triple[e] = static_cast<uint8_t>((w[0] + 1) | (w[1] + 1) << 2 | (w[2] + 1) << 4);
    }
    return t;
  }();
  return table;
}

Tl2vTiles::Tl2vTiles(int64_t n, int64_t k)
    : rows(n),
      cols(k),
      blocks(k / kBlockColumns),
      three_cols(blocks * kBlockColumns),
      tail_lines((k - three_cols + kTailColumns - 1) / kTailColumns),
      tiles((n + kRows - 1) / kRows),
      tile_bytes(blocks * kBlockBytes + tail_lines * kLineBytes),
      data(static_cast<size_t>(tiles * tile_bytes)) {
  std::memset(data.data(), 0, data.size());
}

// Each index byte holds two triples of one row (lane 4r + j, steps 2m and
// 2m+1), so it is written whole; a sign byte holds the 4 lanes of two rows, so
// each row writes its nibble. (A read-modify-write of both bytes per triple
// took a 2B model's load from 5.0 to 5.5 s.)
// Word-wise: the 4 triples (r, s, j = 0..3) of a step are the bytes of 3
// words of codes (columns 12s + 4i .. +3, i = 0, 1, 2), so 9 c0 + 3 c1 + c2
// is one multiply-add of words (bytes stay under 27: no carries) and 4 table
// lookups: 1.1 TSC cycles per weight at load, against 2.2 triple by triple
// (docs/performance.md "Session 13").
void Tl2vTiles::set_row(int64_t r, const int8_t* t) {
  const std::array<uint8_t, 27>& table = tl2_encode_table();
  uint8_t* tb = data.data() + (r / kRows) * tile_bytes;
  const int64_t lane_row = r % kRows;
  const int sign_shift = 4 * static_cast<int>(lane_row % 2);  // lanes 4r..4r+3: byte r/2, bits 4(r%2)..
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* block = tb + b * kBlockBytes;
    uint32_t indices[8];  // [step]: byte j = index of triple (r, s, j)
    for (int s = 0; s < 8; ++s) {
      const int8_t* w = t + b * kBlockColumns + s * kStepColumns;
      const uint32_t n = 9 * ternary_codes_word(w) + 3 * ternary_codes_word(w + 4) + ternary_codes_word(w + 8);
      const uint32_t e = table[n & 0xFF] | uint32_t{table[(n >> 8) & 0xFF]} << 8 |
                         uint32_t{table[(n >> 16) & 0xFF]} << 16 | uint32_t{table[n >> 24]} << 24;
      indices[s] = e & 0x0F0F0F0Fu;
      uint8_t& sign_byte = block[256 + 8 * s + lane_row / 2];
      const unsigned nibble = byte_bits_nibble((e >> 4) & 0x01010101u);
      sign_byte = static_cast<uint8_t>((sign_byte & ~(0xFu << sign_shift)) | nibble << sign_shift);
    }
    for (int m = 0; m < 4; ++m) {
      const uint32_t word = indices[2 * m] | indices[2 * m + 1] << 4;
      std::memcpy(block + m * kLineBytes + 4 * lane_row, &word, 4);
    }
  }
  // Tail: I2S lines, byte 4r + c%4 bits 2(c/4) = code of column three_cols + 16g + c.
  store_two_bit_row(t + three_cols, cols - three_cols, tb + blocks * kBlockBytes + 4 * lane_row, kLineBytes);
}

int Tl2vTiles::weight(int64_t r, int64_t k) const {
  const uint8_t* tb = tile(r / kRows);
  const int64_t lane_row = r % kRows;
  if (k < three_cols) {
    const int64_t b = k / kBlockColumns, c = k % kBlockColumns;
    const int s = static_cast<int>(c / kStepColumns), i = static_cast<int>(c % kStepColumns / 4);
    const int64_t lane = 4 * lane_row + c % 4;
    const uint8_t* block = tb + b * kBlockBytes;
    const int index = (block[(s / 2) * kLineBytes + lane] >> (s % 2 ? 4 : 0)) & 0x0F;
    const bool negative = (block[256 + 8 * s + lane / 8] >> (lane % 8)) & 1;
    const int triple = negative ? kTl2vNegate - tl2v_table().triple[index] : tl2v_table().triple[index];
    return ((triple >> (2 * i)) & 3) - 1;
  }
  const int64_t c = k - three_cols;
  const uint8_t byte = tb[blocks * kBlockBytes + (c / kTailColumns) * kLineBytes + 4 * lane_row + c % 4];
  return ((byte >> (2 * (c % kTailColumns / 4))) & 3) - 1;
}

}  // namespace lowbit
