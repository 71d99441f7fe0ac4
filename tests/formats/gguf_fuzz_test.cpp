// Seeded mutation fuzzing of the reader: thousands of damaged copies of valid
// images (bit flips, byte stores, truncations, counts and lengths set to huge
// values, bytes inserted or removed). Each must open or throw lowbit::Error;
// anything else (a crash, a sanitizer report, another exception) fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "formats/gguf.h"
#include "formats/gguf_test_util.h"
#include "formats/gguf_writer.h"

namespace lowbit {
namespace {

using test::Bytes;

// Values that sit on the edges of the reader's checks.
constexpr uint64_t kEdgeValues[] = {0, 1, 2, 3, 4, 5, 31, 32, 33, 64, 4096, 65535, 65536,
                                    UINT32_MAX, uint64_t{1} << 32, uint64_t{1} << 62, INT64_MAX,
                                    uint64_t{INT64_MAX} + 1, UINT64_MAX - 31, UINT64_MAX};

uint64_t edge_or_random(Rng& rng) {
  const uint64_t pick = rng.below(std::size(kEdgeValues) + 4);
  return pick < std::size(kEdgeValues) ? kEdgeValues[pick] : rng.next_u64() >> rng.below(64);
}

void mutate(Bytes& b, const std::vector<size_t>& u64_fields, Rng& rng) {
  if (b.empty()) return;
  switch (rng.below(7)) {
    case 0:  // flip one bit
      b[rng.below(b.size())] ^= static_cast<uint8_t>(1u << rng.below(8));
      break;
    case 1:  // store a random byte
      b[rng.below(b.size())] = static_cast<uint8_t>(rng.next_u32());
      break;
    case 2:  // truncate
      b.resize(rng.below(b.size()));
      break;
    case 3: {  // a count, length, dimension or offset set to an edge value
      const size_t at = u64_fields[rng.below(u64_fields.size())];
      if (at + 8 <= b.size()) test::patch<uint64_t>(b, at, edge_or_random(rng));
      break;
    }
    case 4: {  // a u32 anywhere (type ids, n_dims) set to a small or edge value
      if (b.size() < 4) break;
      const size_t at = rng.below(b.size() - 3);
      test::patch<uint32_t>(b, at, static_cast<uint32_t>(rng.below(2) ? rng.below(50) : edge_or_random(rng)));
      break;
    }
    case 5: {  // insert a few random bytes
      const size_t at = rng.below(b.size() + 1);
      Bytes extra(1 + rng.below(16));
      for (uint8_t& x : extra) x = static_cast<uint8_t>(rng.next_u32());
      b.insert(b.begin() + static_cast<ptrdiff_t>(at), extra.begin(), extra.end());
      break;
    }
    default: {  // remove a few bytes
      const size_t at = rng.below(b.size());
      const size_t n = std::min<size_t>(1 + rng.below(16), b.size() - at);
      b.erase(b.begin() + static_cast<ptrdiff_t>(at), b.begin() + static_cast<ptrdiff_t>(at + n));
      break;
    }
  }
}

// A second seed image with the value types small_valid_gguf lacks.
test::EncodedGguf writer_image(std::vector<uint8_t>& tensor_data) {
  GgufWriter w;
  w.set_u32("general.alignment", 64);
  w.set_i8("i8", -1);
  w.set_u16("u16", 7);
  w.set_i16("i16", -7);
  w.set_i64("i64", -70);
  w.set_u64("u64", 70);
  w.set_f64("f64", 0.125);
  w.set_u8("u8", 3);
  w.set_raw_array("u64s", test::kU64, 2, test::concat_le<uint64_t>({1, 2}));
  w.set_i32_array("i32s", {-1, 1, 2});
  tensor_data.assign(66 * 2 + 34 * 2, 0x5a);
  w.add_tensor("tq2", GgmlType::TQ2_0, {256, 2}, tensor_data.data(), 66 * 2);
  w.add_tensor("q8", GgmlType::Q8_0, {32, 2}, tensor_data.data() + 66 * 2, 34 * 2);
  test::EncodedGguf e;
  e.bytes = w.write_to_memory();
  // Without a map of its fields, let case 3 hit every 8-byte position.
  for (size_t at = 16; at + 8 <= 400 && at + 8 <= e.bytes.size(); ++at) e.u64_fields.push_back(at);
  return e;
}

TEST(GgufFuzz, MutatedImagesOpenOrThrowError) {
  std::vector<uint8_t> tensor_data;
  const std::vector<test::EncodedGguf> seeds = {test::encode(test::small_valid_gguf()), writer_image(tensor_data)};
  constexpr int kIterationsPerSeed = 15000;
  int accepted = 0, refused = 0;
  Rng rng(20240607);
  for (const test::EncodedGguf& seed : seeds) {
    ASSERT_NO_THROW(GgufFile::from_memory(seed.bytes.data(), seed.bytes.size(), "seed.gguf"));
    for (int it = 0; it < kIterationsPerSeed; ++it) {
      Bytes b = seed.bytes;
      const int n_mutations = 1 + static_cast<int>(rng.below(3));
      for (int m = 0; m < n_mutations; ++m) mutate(b, seed.u64_fields, rng);
      try {
        const auto f = GgufFile::from_memory(b.data(), b.size(), "fuzz.gguf");
        test::touch_everything(*f);
        ++accepted;
      } catch (const Error& e) {
        ASSERT_EQ(std::string(e.what()).rfind("fuzz.gguf: ", 0), 0u) << e.what();
        ++refused;
      } catch (const std::exception& e) {
        FAIL() << "iteration " << it << ": " << typeid(e).name() << ": " << e.what();
      }
    }
  }
  // Both outcomes must be common, or the mutations are not exercising the reader.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace lowbit
