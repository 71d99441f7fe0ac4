// One row's 4 bytes of a 16-column step of the VNNI4-interleaved 2-bit layout
// (int2's steps in vnni4_layout.h, I2sTiles' lines): byte j holds the codes of
// columns j, j+4, j+8 and j+12 at bits 0, 2, 4 and 6. Built a 4-byte word at a
// time (the codes of columns 4v..4v+3 shifted by 2v and OR-ed), which is what
// makes repacking a model at load fast: I2sTiles::set_row took 3.2 TSC cycles
// per weight code by code, 0.5-0.6 this way (docs/performance.md "Session 13").
#pragma once

#include <cstdint>
#include <cstring>

namespace lowbit {

namespace two_bit_detail {
inline uint32_t load_word(const void* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}
}  // namespace two_bit_detail

// codes[0..15]: only their low 2 bits are kept.
inline uint32_t two_bit_word(const uint8_t* codes) {
  uint32_t word = 0;
  for (int v = 0; v < 4; ++v) word |= (two_bit_detail::load_word(codes + 4 * v) & 0x03030303u) << (2 * v);
  return word;
}

// The codes t + 1 of t[0..3] in {-1, 0, +1}, one per byte (0..2): + 1 in
// every byte with no carry across bytes (0xFF, i.e. -1, -> 0; 0 -> 1; 1 -> 2).
inline uint32_t ternary_codes_word(const int8_t* t) {
  const uint32_t d = two_bit_detail::load_word(t);
  return ((d & 0x7F7F7F7Fu) + 0x01010101u) ^ (d & 0x80808080u);
}

// t[0..15] in {-1, 0, +1}, stored as codes t + 1.
inline uint32_t two_bit_word_of_ternary(const int8_t* t) {
  uint32_t word = 0;
  for (int v = 0; v < 4; ++v) word |= (ternary_codes_word(t + 4 * v) & 0x03030303u) << (2 * v);
  return word;
}

// A row's words for all ceil(cols / 16) lines of 16 columns, the first at
// `out`, each next one `stride` bytes further; columns past `cols` get code 0.
inline void store_two_bit_row(const int8_t* t, int64_t cols, uint8_t* out, int64_t stride) {
  const int64_t whole = cols / 16;
  for (int64_t g = 0; g < whole; ++g) {
    const uint32_t word = two_bit_word_of_ternary(t + 16 * g);
    std::memcpy(out + g * stride, &word, 4);
  }
  if (whole * 16 < cols) {
    uint8_t codes[16] = {};
    for (int64_t k = whole * 16; k < cols; ++k) codes[k - whole * 16] = static_cast<uint8_t>(t[k] + 1);
    const uint32_t word = two_bit_word(codes);
    std::memcpy(out + whole * stride, &word, 4);
  }
}

}  // namespace lowbit
