#include "kernels/i2s_tiles.h"

#include "kernels/two_bit_word.h"

namespace lowbit {

namespace {

// Byte offset inside a tile and bit shift of the code of (row r % 16, column k).
struct CodePlace {
  int64_t byte;
  int shift;
};

CodePlace place(int64_t r, int64_t k) {
  const int64_t g = k / I2sTiles::kColumns, c = k % I2sTiles::kColumns;
  return {g * I2sTiles::kLineBytes + 4 * (r % I2sTiles::kRows) + c % 4, static_cast<int>(2 * (c / 4))};
}

}  // namespace

I2sTiles::I2sTiles(int64_t n, int64_t k)
    : rows(n),
      cols(k),
      tiles((n + kRows - 1) / kRows),
      groups((k + kColumns - 1) / kColumns),
      data(static_cast<size_t>(tiles * groups * kLineBytes)) {}

void I2sTiles::set_row(int64_t r, const int8_t* t) {
  // Row r owns bytes 4*(r%16) .. +3 of every line: byte b of group g holds
  // columns 16g + b, +4, +8, +12 at shifts 0, 2, 4, 6 (place() above).
  store_two_bit_row(t, cols, data.data() + (r / kRows) * groups * kLineBytes + 4 * (r % kRows), kLineBytes);
}

int I2sTiles::code(int64_t r, int64_t k) const {
  const CodePlace p = place(r, k);
  return (tile(r / kRows)[p.byte] >> p.shift) & 3;
}

}  // namespace lowbit
