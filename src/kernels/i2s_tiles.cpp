#include "kernels/i2s_tiles.h"

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
  uint8_t* tile_bytes = data.data() + (r / kRows) * groups * kLineBytes;
  for (int64_t k = 0; k < cols; ++k) {
    const CodePlace p = place(r, k);
    tile_bytes[p.byte] = static_cast<uint8_t>(tile_bytes[p.byte] | ((t[k] + 1) << p.shift));
  }
}

int I2sTiles::code(int64_t r, int64_t k) const {
  const CodePlace p = place(r, k);
  return (tile(r / kRows)[p.byte] >> p.shift) & 3;
}

}  // namespace lowbit
