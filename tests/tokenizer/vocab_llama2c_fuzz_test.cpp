// llama2.c tokenizer files (tokenizer.bin) with damage anywhere: each is read
// into a vocabulary that tokenizes and detokenizes text, or refused with an
// Error naming the path; never a crash or a read past the file (the suite also
// runs under AddressSanitizer + UBSan).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/rng.h"
#include "fixtures.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_fixtures.h"
#include "tokenizer/vocab_llama2c.h"

namespace lowbit::vocab_llama2c_fuzz_test {
namespace {

// One damage: a 4-byte field (a length, a score or the header) to an extreme,
// a byte to anything, the file cut short, or bytes added.
void damage(std::string& b, Rng& rng) {
  static const int32_t kExtremes[] = {INT32_MIN, -1, 0, 1, 2, 7, 255, 256, 65536, INT32_MAX,
                                      0x7fc00000 /* NaN as a score */, 0x7f800000 /* +Inf */};
  switch (rng.below(4)) {
    case 0: {
      const size_t at = rng.below(b.size() - 3);
      const int32_t v = kExtremes[rng.below(std::size(kExtremes))];
      std::memcpy(&b[at], &v, 4);
      break;
    }
    case 1:
      b[rng.below(b.size())] = static_cast<char>(rng.next_u32());
      break;
    case 2:
      b.resize(rng.below(b.size()));
      break;
    default:
      b.insert(rng.below(b.size() + 1), std::string(1 + rng.below(8), static_cast<char>(rng.next_u32())));
      break;
  }
}

TEST(VocabLlama2cFuzz, DamagedFilesTokenizeOrAreRefusedNamingThem) {
  const std::string seed = testing::read_whole_file(testing::fixture_path("llama2c/tok512.bin"));
  const std::string path = lowbit::testing::temp_path("tok-fuzz.bin");
  const std::string text = "Once upon a time, there was a <s> \xe2\x96\x81 caf\xc3\xa9 \xff\x01 123!";
  constexpr int kIterations = 3000;
  int read = 0, refused = 0;
  Rng rng(20261128);
  for (int it = 0; it < kIterations; ++it) {
    std::string b = seed;
    for (uint64_t n = 1 + rng.below(3); n > 0 && b.size() >= 4; --n) damage(b, rng);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << b;
    try {
      const auto tok = Tokenizer::create(read_vocab_llama2c(path, 512));
      std::string round_trip;
      for (int32_t id : tok->encode(text, true, true)) round_trip += tok->token_to_piece(id);
      EXPECT_FALSE(round_trip.empty());
      ++read;
    } catch (const Error& e) {
      ASSERT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
      ++refused;
    } catch (const std::exception& e) {
      FAIL() << "iteration " << it << ": " << e.what();
    }
  }
  // Both outcomes must be common, or the damage is not exercising the reader.
  EXPECT_GT(read, 200);
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace lowbit::vocab_llama2c_fuzz_test
