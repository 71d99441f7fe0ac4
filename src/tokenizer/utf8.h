// The few UTF-8 facts the tokenizers need. Invalid input is never an error
// here: a stray byte is a one-byte "character", so every byte string splits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lowbit {

// Length of the UTF-8 sequence that starts with `lead`, from its high bits
// (continuation bytes and invalid leads count as 1), as SentencePiece and
// llama.cpp split text into characters.
inline size_t utf8_sequence_length(uint8_t lead) {
  static constexpr uint8_t by_high_nibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return by_high_nibble[lead >> 4];
}

// The length of the character at text[pos]: its lead byte's length when the
// continuation bytes are there, else 1. (llama.cpp trusts the lead byte alone;
// checking keeps a stray lead byte from swallowing the U+2581 of a following
// space, which would then decode as U+2581 instead of ' '. Valid UTF-8 splits
// the same either way.)
inline size_t utf8_char_length_at(std::string_view text, size_t pos) {
  const size_t n = utf8_sequence_length(static_cast<uint8_t>(text[pos]));
  if (n > text.size() - pos) return 1;
  for (size_t i = 1; i < n; ++i) {
    if ((static_cast<uint8_t>(text[pos + i]) & 0xC0) != 0x80) return 1;
  }
  return n;
}

inline void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// SentencePiece writes a space as U+2581 LOWER ONE EIGHTH BLOCK.
inline constexpr std::string_view kSpmSpace = "\xE2\x96\x81";

}  // namespace lowbit
