#include "kernels/tl_tiles.h"

#include <array>
#include <cstring>

namespace lowbit {

namespace {

int tl1_index(int w0, int w1) { return 3 * (w0 + 1) + (w1 + 1); }

int base3(const int8_t* w) { return 9 * (w[0] + 1) + 3 * (w[1] + 1) + (w[2] + 1); }

// The bit of row r (0..63) in a sign word: the inverse of tl_row_of_lane.
int sign_bit_of_row(int r) {
  const int half = (r % 16) / 8;
  return 32 * half + 8 * (r / 16) + r % 8;
}

int nibble(uint8_t byte, int high) { return high ? byte >> 4 : byte & 0x0f; }

}  // namespace

const std::array<uint8_t, 27>& tl2_encode_table() {
  static const auto table = [] {
    std::array<uint8_t, 27> t{};
    // n < 13: the first nonzero weight is negative; the negated triple has number 26 - n.
    for (int n = 0; n < 27; ++n) t[n] = static_cast<uint8_t>(n >= 13 ? n - 13 : (13 - n) | 16);
    return t;
  }();
  return table;
}

void tl1_pair_of_index(int i, int w[2]) {
  w[0] = i / 3 - 1;
  w[1] = i % 3 - 1;
}

void tl2_triple_of_index(int i, int w[3]) {
  const int n = i + 13;
  w[0] = n / 9 - 1;
  w[1] = n / 3 % 3 - 1;
  w[2] = n % 3 - 1;
}

TlTiles::TlTiles(int64_t n, int64_t k, bool with_triples)
    : rows(n),
      cols(k),
      three_cols(with_triples ? k / 6 * 6 : 0),
      tl2_steps(three_cols / 6),
      tl1_steps((k - three_cols + 3) / 4),
      tiles((n + kRows - 1) / kRows) {
  tile_bytes = (tl1_offset() + tl1_steps * 64 + 63) / 64 * 64;
  data = AlignedBuffer<uint8_t>(static_cast<size_t>(tiles * tile_bytes));
}

// Index bytes are written whole (each holds two groups of one row: group
// counts are even), and a row's sign bit is OR-ed in (the buffer starts zeroed).
void TlTiles::set_row(int64_t r, const int8_t* t) {
  const std::array<uint8_t, 27>& table = tl2_encode_table();
  uint8_t* tile_bytes_ptr = data.data() + (r / kRows) * tile_bytes;
  const int row = static_cast<int>(r % kRows);
  const int bit = sign_bit_of_row(row);
  uint8_t* signs = tile_bytes_ptr + sign_offset() + bit / 8;
  for (int64_t g = 0; g < tl2_groups(); g += 2) {
    const uint8_t e0 = table[base3(t + 3 * g)], e1 = table[base3(t + 3 * g + 3)];
    tile_bytes_ptr[(g / 2) * 64 + row] = static_cast<uint8_t>((e0 & 15) | (e1 & 15) << 4);
    signs[g * 8] = static_cast<uint8_t>(signs[g * 8] | (e0 >> 4) << (bit % 8));
    signs[(g + 1) * 8] = static_cast<uint8_t>(signs[(g + 1) * 8] | (e1 >> 4) << (bit % 8));
  }
  // TL1 pairs, two per byte: whole bytes (4 columns inside K) without bounds checks.
  uint8_t* tl1 = tile_bytes_ptr + tl1_offset() + row;
  const int8_t* w = t + three_cols;
  const int64_t tl1_cols = cols - three_cols, whole = tl1_cols / 4;
  for (int64_t b = 0; b < whole; ++b)
    tl1[b * 64] = static_cast<uint8_t>(tl1_index(w[4 * b], w[4 * b + 1]) | tl1_index(w[4 * b + 2], w[4 * b + 3]) << 4);
  for (int64_t b = whole; b < tl1_groups() / 2; ++b) {  // columns past K count as 0
    int v[4];
    for (int i = 0; i < 4; ++i) v[i] = 4 * b + i < tl1_cols ? w[4 * b + i] : 0;
    tl1[b * 64] = static_cast<uint8_t>(tl1_index(v[0], v[1]) | tl1_index(v[2], v[3]) << 4);
  }
}

int TlTiles::weight(int64_t r, int64_t k) const {
  const uint8_t* tb = tile(r / kRows);
  const int row = static_cast<int>(r % kRows);
  if (k < three_cols) {
    const int64_t g = k / 3;
    int w[3];
    tl2_triple_of_index(nibble(tb[(g / 2) * 64 + row], static_cast<int>(g % 2)), w);
    const int bit = sign_bit_of_row(row);
    const bool negative = (tb[sign_offset() + g * 8 + bit / 8] >> (bit % 8)) & 1;
    return negative ? -w[k % 3] : w[k % 3];
  }
  const int64_t p = (k - three_cols) / 2;
  int w[2];
  tl1_pair_of_index(nibble(tb[tl1_offset() + (p / 2) * 64 + row], static_cast<int>(p % 2)), w);
  return w[(k - three_cols) % 2];
}

}  // namespace lowbit
