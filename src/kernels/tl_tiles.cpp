#include "kernels/tl_tiles.h"

#include <cstring>

namespace lowbit {

namespace {

int tl1_index(int w0, int w1) { return 3 * (w0 + 1) + (w1 + 1); }

struct SignedIndex {
  int index;
  bool negative;
};

SignedIndex tl2_index(int w0, int w1, int w2) {
  const int n = 9 * (w0 + 1) + 3 * (w1 + 1) + (w2 + 1);
  // n < 13: the first nonzero weight is negative; -w has number 26 - n.
  return n >= 13 ? SignedIndex{n - 13, false} : SignedIndex{13 - n, true};
}

// The bit of row r (0..63) in a sign word: the inverse of tl_row_of_lane.
int sign_bit_of_row(int r) {
  const int half = (r % 16) / 8;
  return 32 * half + 8 * (r / 16) + r % 8;
}

void set_nibble(uint8_t* byte, int high, int value) {
  *byte = static_cast<uint8_t>(high ? (*byte & 0x0f) | (value << 4) : (*byte & 0xf0) | value);
}

int nibble(uint8_t byte, int high) { return high ? byte >> 4 : byte & 0x0f; }

}  // namespace

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

void TlTiles::set_row(int64_t r, const int8_t* t) {
  uint8_t* tile_bytes_ptr = data.data() + (r / kRows) * tile_bytes;
  const int row = static_cast<int>(r % kRows);
  for (int64_t g = 0; g < tl2_groups(); ++g) {
    const SignedIndex s = tl2_index(t[3 * g], t[3 * g + 1], t[3 * g + 2]);
    set_nibble(tile_bytes_ptr + (g / 2) * 64 + row, static_cast<int>(g % 2), s.index);
    uint8_t* word = tile_bytes_ptr + sign_offset() + g * 8;
    const int bit = sign_bit_of_row(row);
    word[bit / 8] = static_cast<uint8_t>(word[bit / 8] | (s.negative << (bit % 8)));
  }
  for (int64_t p = 0; p < tl1_groups(); ++p) {
    const int64_t k = three_cols + 2 * p;
    const int w0 = k < cols ? t[k] : 0, w1 = k + 1 < cols ? t[k + 1] : 0;
    set_nibble(tile_bytes_ptr + tl1_offset() + (p / 2) * 64 + row, static_cast<int>(p % 2), tl1_index(w0, w1));
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
