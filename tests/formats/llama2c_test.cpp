// llama2.c checkpoints: the real stories260K, and malformed files refused with
// the field or array that is wrong.
#include "formats/llama2c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "core/error.h"
#include "fixtures.h"

namespace lowbit {
namespace {

using testing::fixture;
using testing::read_text;

TEST(Llama2cCheckpoint, ReadsStories260K) {
  Llama2cCheckpoint ck(fixture("llama2c/stories260K.bin"));
  const Llama2cConfig& c = ck.config();
  EXPECT_EQ(ck.version(), 0);
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.seq_len, 512);
  EXPECT_TRUE(c.shared_classifier);
  const Llama2cWeights& w = ck.weights();
  EXPECT_EQ(w.wcls, w.token_embedding);
  // The layout puts rms_final right after w3: 28-byte header, then the arrays in order.
  const int64_t D = 64, H = 172, L = 5, V = 512, KV = 32;
  const int64_t before_final = V * D + L * D + L * D * D + 2 * L * KV * D + L * D * D + L * D + 3 * L * H * D;
  EXPECT_EQ(w.rms_final, reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(w.token_embedding)) + before_final);
}

// Writes `bytes` to a temp file and expects opening it to fail with `reason` in the message.
void expect_refused(const std::string& name, const std::string& bytes, const std::string& reason) {
  const std::string path = testing::temp_path(name);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  try {
    Llama2cCheckpoint ck(path);
    ADD_FAILURE() << name << ": opened";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << name << ": " << msg;
  }
}

std::string header(std::vector<int32_t> fields) {
  std::string s(fields.size() * 4, '\0');
  std::memcpy(s.data(), fields.data(), s.size());
  return s;
}

TEST(Llama2cCheckpoint, MalformedFilesAreRefusedNamingTheProblem) {
  const std::string real = read_text(fixture("llama2c/stories260K.bin"));
  expect_refused("short.bin", real.substr(0, 20), "too short");
  expect_refused("truncated.bin", real.substr(0, real.size() / 2), "truncated: w1 needs");
  expect_refused("truncated-end.bin", real.substr(0, real.size() - 4), "truncated: freq_cis");
  expect_refused("zero-dim.bin", header({0, 172, 5, 8, 4, 512, 512}), "dim = 0");
  expect_refused("neg-layers.bin", header({64, 172, -5, 8, 4, 512, 512}), "n_layers = -5");
  expect_refused("kv-heads.bin", header({64, 172, 5, 8, 16, 512, 512}), "n_kv_heads = 16");
  expect_refused("heads-split.bin", header({64, 172, 5, 7, 7, 512, 512}), "not a multiple of n_heads");
  expect_refused("gqa-split.bin", header({64, 172, 5, 8, 3, 512, 512}), "not a multiple of n_kv_heads");
  expect_refused("huge-vocab.bin", header({64, 172, 5, 8, 4, 1 << 30, 512}), "vocab_size");
  std::string v2 = header({0x616b3432, 2}) + std::string(248, '\0');
  expect_refused("v2.bin", v2, "version 2");
}

TEST(Llama2cCheckpoint, UnsharedClassifierNeedsItsWeights) {
  std::string real = read_text(fixture("llama2c/stories260K.bin"));
  const int32_t negative_vocab = -512;
  std::memcpy(real.data() + 20, &negative_vocab, 4);  // says: a separate wcls follows
  expect_refused("no-wcls.bin", real, "truncated: wcls");
}

}  // namespace
}  // namespace lowbit
