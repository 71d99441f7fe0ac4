#include "tokenizer/byte_level.h"

#include <gtest/gtest.h>

#include <set>

namespace lowbit {
namespace {

TEST(ByteLevel, MapsBytesToGpt2Characters) {
  EXPECT_EQ(byte_level_char(' '), "\xC4\xA0");   // U+0120 Ġ
  EXPECT_EQ(byte_level_char('\n'), "\xC4\x8A");  // U+010A Ċ
  EXPECT_EQ(byte_level_char('a'), "a");
  EXPECT_EQ(byte_level_char(0xAD), "\xC5\x83");  // the soft hyphen is the 68th non-printable: U+0143
  EXPECT_EQ(byte_level_char(0xA1), "\xC2\xA1");  // printable Latin-1 stands for itself
  EXPECT_EQ(byte_level_char(0), "\xC4\x80");     // U+0100
}

TEST(ByteLevel, IsABijectionOnBytes) {
  std::set<std::string> seen;
  for (int b = 0; b < 256; ++b) {
    const std::string& c = byte_level_char(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(c).second) << b;
    EXPECT_EQ(decode_byte_level(c), std::string(1, static_cast<char>(b))) << b;
  }
  std::string all_bytes, encoded;
  for (int b = 255; b >= 0; --b) all_bytes += static_cast<char>(b);
  append_byte_level(encoded, all_bytes);
  EXPECT_EQ(decode_byte_level(encoded), all_bytes);
}

TEST(ByteLevel, KeepsCharactersOutsideTheAlphabet) {
  EXPECT_EQ(decode_byte_level("<|eot_id|>"), "<|eot_id|>");
  EXPECT_EQ(decode_byte_level("\xE4\xB8\xAD"), "\xE4\xB8\xAD");  // 中: not a byte-level character
  EXPECT_EQ(decode_byte_level("\xC4"), "\xC4");                  // truncated sequence
}

}  // namespace
}  // namespace lowbit
