// GPT-2's byte-level alphabet: every byte is written as one printable Unicode
// character so that a BPE vocabulary of byte strings can be stored as text.
// Printable bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for
// themselves; the other 68 bytes take U+0100, U+0101, ... in byte order
// (so ' ' is U+0120 'Ġ' and '\n' is U+010A 'Ċ').
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lowbit {

// The UTF-8 form of the character that stands for `byte`.
const std::string& byte_level_char(uint8_t byte);

// Appends the byte-level form of raw bytes.
void append_byte_level(std::string& out, std::string_view bytes);

// The raw bytes a byte-level token stands for. Characters outside the alphabet
// (special tokens never are byte-level encoded) are kept as their UTF-8 bytes.
std::string decode_byte_level(std::string_view token);

}  // namespace lowbit
