#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace lowbit {
namespace {

struct ByteLevelTables {
  std::array<std::string, 256> char_of_byte;
  std::array<int16_t, 0x144> byte_of_codepoint;  // -1 where no byte maps there

  ByteLevelTables() {
    byte_of_codepoint.fill(-1);
    uint32_t next_extra = 0x100;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      const uint32_t cp = printable ? b : next_extra++;
      append_utf8(char_of_byte[b], cp);
      byte_of_codepoint[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteLevelTables& tables() {
  static const ByteLevelTables t;
  return t;
}

}  // namespace

const std::string& byte_level_char(uint8_t byte) { return tables().char_of_byte[byte]; }

void append_byte_level(std::string& out, std::string_view bytes) {
  const ByteLevelTables& t = tables();
  for (char c : bytes) out += t.char_of_byte[static_cast<uint8_t>(c)];
}

std::string decode_byte_level(std::string_view token) {
  const ByteLevelTables& t = tables();
  std::string out;
  out.reserve(token.size());
  size_t pos = 0;
  while (pos < token.size()) {
    const size_t len = utf8_char_length_at(token, pos);
    const auto b0 = static_cast<uint8_t>(token[pos]);
    uint32_t cp = 0x110000;  // none: keep the bytes
    if (len == 1 && b0 < 0x80) {
      cp = b0;
    } else if (len == 2 && (b0 & 0xE0) == 0xC0 && (static_cast<uint8_t>(token[pos + 1]) & 0xC0) == 0x80) {
      cp = ((b0 & 0x1Fu) << 6) | (static_cast<uint8_t>(token[pos + 1]) & 0x3Fu);
      if (cp < 0x80) cp = 0x110000;  // overlong: not a character of the alphabet
    }
    if (cp < t.byte_of_codepoint.size() && t.byte_of_codepoint[cp] >= 0) {
      out += static_cast<char>(t.byte_of_codepoint[cp]);
    } else {
      out.append(token.substr(pos, len));
    }
    pos += len;
  }
  return out;
}

}  // namespace lowbit
