// llama2.c checkpoints with damaged headers: every one opens with views that
// lie inside the file, or is refused with an Error naming the path; never a
// crash, an overflow or a read past the mapping (the suite also runs under
// AddressSanitizer + UBSan, where undefined behaviour aborts). A vocab_size of
// INT32_MIN, negated to mean "separate classifier", was such a case.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "fixtures.h"
#include "formats/llama2c.h"

namespace lowbit::llama2c_fuzz_test {
namespace {

using Bytes = std::vector<uint8_t>;

void put_i32(Bytes& b, size_t at, int32_t v) { std::memcpy(&b[at], &v, 4); }

// A tiny checkpoint: dim 8, hidden 12, 2 layers, 2 heads, 1 KV head, vocab
// 5, seq_len 3; version 0 (7-int header, freq_cis at the end) or version 1
// (256-byte header: "ak42", version, the 7 ints, the shared-classifier byte).
Bytes tiny_checkpoint(int version) {
  const int64_t D = 8, H = 12, L = 2, heads = 2, kv_heads = 1, V = 5, seq = 3;
  const int64_t head = D / heads, kv = head * kv_heads;
  int64_t floats = V * D + 2 * L * D + D + 2 * L * D * D + 2 * L * kv * D + 3 * L * H * D;
  if (version == 0) floats += seq * head;
  const size_t header = version == 0 ? 28 : 256;
  Bytes b(header + static_cast<size_t>(floats) * 4, 0);
  const size_t cfg = version == 0 ? 0 : 8;
  if (version == 1) {
    put_i32(b, 0, 0x616b3432);
    put_i32(b, 4, 1);
    b[cfg + 28] = 1;  // shared classifier
  }
  const int32_t fields[] = {int32_t{D}, int32_t{H}, int32_t{L}, int32_t{heads}, int32_t{kv_heads}, int32_t{V},
                            int32_t{seq}};
  for (size_t i = 0; i < 7; ++i) put_i32(b, cfg + 4 * i, fields[i]);
  for (size_t i = header; i + 4 <= b.size(); i += 4) {
    const float w = 0.01f * static_cast<float>(i % 97);
    std::memcpy(&b[i], &w, 4);
  }
  return b;
}

// One damage to the header (the weights are any floats: nothing there to check).
void damage(Bytes& b, size_t header, Rng& rng) {
  static const int32_t kExtremes[] = {INT32_MIN, INT32_MIN + 1, -65536, -513, -2, -1, 0, 1, 2, 3,
                                      7, 513, 65535, 65536, 1 << 22, (1 << 22) + 1, INT32_MAX};
  switch (rng.below(5)) {
    case 0:  // a header int to an extreme
    case 1: {
      const size_t at = 4 * rng.below(header / 4);
      put_i32(b, at, kExtremes[rng.below(std::size(kExtremes))]);
      break;
    }
    case 2:  // a header byte to anything
      b[rng.below(header)] = static_cast<uint8_t>(rng.next_u32());
      break;
    case 3:  // cut short
      b.resize(rng.below(b.size()));
      break;
    default:  // a few bytes more
      for (uint64_t n = 1 + rng.below(8); n > 0; --n) b.push_back(static_cast<uint8_t>(rng.next_u32()));
      break;
  }
}

// Reads the first and last float of every array the views describe: each must lie in the file.
float touch(const Llama2cCheckpoint& ck) {
  const Llama2cConfig& c = ck.config();
  const Llama2cWeights& w = ck.weights();
  const int64_t D = c.dim, H = c.hidden_dim, L = c.n_layers, V = c.vocab_size;
  const int64_t kv = D / c.n_heads * c.n_kv_heads;
  const std::pair<const float*, int64_t> arrays[] = {
      {w.token_embedding, V * D}, {w.rms_att, L * D},     {w.wq, L * D * D},     {w.wk, L * kv * D},
      {w.wv, L * kv * D},         {w.wo, L * D * D},      {w.rms_ffn, L * D},    {w.w1, L * H * D},
      {w.w2, L * D * H},          {w.w3, L * H * D},      {w.rms_final, D},      {w.wcls, V * D}};
  float sum = 0;
  for (const auto& [p, n] : arrays) sum += p[0] + p[n - 1];
  return sum;
}

TEST(Llama2cFuzz, DamagedHeadersOpenInsideTheFileOrAreRefusedNamingIt) {
  const std::string path = testing::temp_path("llama2c-fuzz.bin");
  constexpr int kIterationsPerSeed = 2500;
  int opened = 0, refused = 0;
  Rng rng(20261128);
  for (int version : {0, 1}) {
    const Bytes seed = tiny_checkpoint(version);
    const size_t header = version == 0 ? 28 : 256;
    for (int it = 0; it < kIterationsPerSeed; ++it) {
      Bytes b = seed;
      for (uint64_t n = 1 + rng.below(3); n > 0 && b.size() >= header; --n) damage(b, header, rng);
      std::ofstream(path, std::ios::binary | std::ios::trunc)
          .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
      try {
        const Llama2cCheckpoint ck(path);
        volatile float sink = touch(ck);
        (void)sink;
        ++opened;
      } catch (const Error& e) {
        ASSERT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
        ++refused;
      } catch (const std::exception& e) {
        FAIL() << "version " << version << ", iteration " << it << ": " << e.what();
      }
    }
  }
  // Both outcomes must be common, or the damage is not exercising the reader.
  EXPECT_GT(opened, 500);
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace lowbit::llama2c_fuzz_test
