// Files written by other tools (bitnet.cpp, llama.cpp, gguf-py) read as they
// are: metadata, tensor table, and tensor data checked across files (the same
// model in F16 and I2_S must hold the same ternary weights).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/half.h"
#include "formats/gguf.h"

namespace lowbit {
namespace {

const std::string kFixtures = LOWBIT_FIXTURES_DIR;
const std::string kTinyA = kFixtures + "/peer/tiny-a/tiny-a-";

// tiny-a's tensors: name -> shape (ggml order). Matrices are the 7 per block.
std::map<std::string, std::vector<int64_t>> tiny_a_shapes() {
  std::map<std::string, std::vector<int64_t>> s = {{"token_embd.weight", {256, 32000}},
                                                   {"output_norm.weight", {256}}};
  for (const std::string b : {"blk.0.", "blk.1."}) {
    s[b + "attn_norm.weight"] = {256};
    s[b + "attn_q.weight"] = {256, 256};
    s[b + "attn_k.weight"] = {256, 128};
    s[b + "attn_v.weight"] = {256, 128};
    s[b + "attn_sub_norm.weight"] = {256};
    s[b + "attn_output.weight"] = {256, 256};
    s[b + "ffn_norm.weight"] = {256};
    s[b + "ffn_gate.weight"] = {256, 768};
    s[b + "ffn_up.weight"] = {256, 768};
    s[b + "ffn_sub_norm.weight"] = {768};
    s[b + "ffn_down.weight"] = {768, 256};
  }
  return s;
}

bool is_norm(const std::string& name) { return name.find("norm") != std::string::npos; }

void expect_tiny_a(const std::string& suffix, GgmlType matrix_type, GgmlType embedding_type) {
  SCOPED_TRACE(suffix);
  const GgufFile f(kTinyA + suffix + ".gguf");
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get_string("general.architecture"), "bitnet");
  EXPECT_EQ(f.get_string("general.name"), "tiny-a (random ternary fixture)");
  EXPECT_EQ(f.get_uint("bitnet.block_count"), 2u);
  EXPECT_EQ(f.get_uint("bitnet.embedding_length"), 256u);
  EXPECT_EQ(f.get_uint("bitnet.feed_forward_length"), 768u);
  EXPECT_EQ(f.get_uint("bitnet.attention.head_count_kv"), 2u);
  EXPECT_FLOAT_EQ(static_cast<float>(f.get_float("bitnet.attention.layer_norm_rms_epsilon")), 1e-5f);
  EXPECT_EQ(f.get_float("bitnet.rope.freq_base"), 10000.0);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "llama");
  EXPECT_TRUE(f.get_bool("tokenizer.ggml.add_bos_token"));
  EXPECT_EQ(f.get_uint("tokenizer.ggml.bos_token_id"), 1u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 32000u);
  EXPECT_EQ(f.get_float_array("tokenizer.ggml.scores").size(), 32000u);
  EXPECT_EQ(f.alignment(), 32u);

  const auto shapes = tiny_a_shapes();
  ASSERT_EQ(f.tensors().size(), 24u);
  uint64_t end = 0;
  for (const GgufTensorInfo& t : f.tensors()) {
    SCOPED_TRACE(t.name);
    ASSERT_EQ(shapes.count(t.name), 1u);
    EXPECT_EQ(t.shape, shapes.at(t.name));
    const GgmlType want = t.name == "token_embd.weight" ? embedding_type : is_norm(t.name) ? GgmlType::F32 : matrix_type;
    EXPECT_EQ(t.type, want);
    EXPECT_EQ(t.data, f.tensor(t.name).data);
    end = std::max(end, t.offset + t.bytes);
  }
  // The writers pack tensors back to back and pad the last one.
  EXPECT_EQ(f.data_offset() + (end + 31) / 32 * 32, f.file_size());
}

TEST(GgufFixtures, TinyAInEveryType) {
  expect_tiny_a("f16", GgmlType::F16, GgmlType::F16);
  expect_tiny_a("i2_s", GgmlType::I2_S, GgmlType::F16);
  expect_tiny_a("tq2_0", GgmlType::TQ2_0, GgmlType::Q6_K);
  expect_tiny_a("tq1_0", GgmlType::TQ1_0, GgmlType::Q6_K);
}

// The I2_S file holds the F16 file's ternary weights: per matrix, as many
// codes 0/1/2 (-1/0/+1) as the F16 tensor has negative/zero/positive values,
// and a trailing float scale equal to their magnitude. Checks every data
// pointer of both files, and I2_S's extra 32 bytes.
TEST(GgufFixtures, TinyAI2sMatchesF16) {
  const GgufFile f16(kTinyA + "f16.gguf");
  const GgufFile i2s(kTinyA + "i2_s.gguf");
  EXPECT_EQ(i2s.file_size(), 17516448u);
  EXPECT_EQ(static_cast<uint32_t>(i2s.tensor("blk.0.attn_q.weight").type), 36u);
  int matrices = 0;
  for (const GgufTensorInfo& q : i2s.tensors()) {
    if (q.type != GgmlType::I2_S) continue;
    SCOPED_TRACE(q.name);
    ++matrices;
    const GgufTensorInfo& h = f16.tensor(q.name);
    ASSERT_EQ(h.shape, q.shape);
    ASSERT_EQ(q.bytes, static_cast<uint64_t>(q.n_elements / 4 + 32));

    int64_t f16_count[3] = {0, 0, 0};
    float magnitude = 0;
    for (int64_t k = 0; k < h.n_elements; ++k) {
      uint16_t bits;
      std::memcpy(&bits, h.data + 2 * k, 2);
      const float w = fp16_to_float(bits);
      f16_count[w < 0 ? 0 : w == 0 ? 1 : 2]++;
      if (w != 0) {
        if (magnitude == 0) magnitude = std::fabs(w);
        ASSERT_EQ(std::fabs(w), magnitude) << "not ternary at " << k;
      }
    }
    int64_t code_count[4] = {0, 0, 0, 0};
    for (int64_t k = 0; k < q.n_elements / 4; ++k)
      for (int shift = 0; shift < 8; shift += 2) code_count[(q.data[k] >> shift) & 3]++;
    EXPECT_EQ(code_count[3], 0);
    EXPECT_EQ(code_count[0], f16_count[0]);
    EXPECT_EQ(code_count[1], f16_count[1]);
    EXPECT_EQ(code_count[2], f16_count[2]);
    float scale;
    std::memcpy(&scale, q.data + q.n_elements / 4, 4);
    EXPECT_EQ(scale, magnitude);
  }
  EXPECT_EQ(matrices, 14);

  const GgufTensorInfo& e16 = f16.tensor("token_embd.weight");
  const GgufTensorInfo& e2 = i2s.tensor("token_embd.weight");
  ASSERT_EQ(e16.bytes, 256u * 32000 * 2);
  ASSERT_EQ(e2.bytes, e16.bytes);
  EXPECT_EQ(std::memcmp(e16.data, e2.data, e16.bytes), 0);
}

TEST(GgufFixtures, TinyATernaryTypesHaveLlamaCppSizes) {
  const GgufFile tq2(kTinyA + "tq2_0.gguf");
  const GgufFile tq1(kTinyA + "tq1_0.gguf");
  EXPECT_EQ(tq2.tensor("blk.0.ffn_down.weight").bytes, 768u * 256 / 256 * 66);
  EXPECT_EQ(tq1.tensor("blk.0.ffn_down.weight").bytes, 768u * 256 / 256 * 54);
  EXPECT_EQ(tq2.tensor("token_embd.weight").bytes, 256u * 32000 / 256 * 210);
  EXPECT_EQ(tq2.tensor("token_embd.weight").offset, 1024u);
  EXPECT_EQ(tq2.get_uint("general.file_type"), 37u);
  EXPECT_EQ(tq1.get_uint("general.file_type"), 36u);
}

TEST(GgufFixtures, LlamaSpmVocabulary) {
  const GgufFile vocab(kFixtures + "/vocab/ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(vocab.get_string("general.architecture"), "llama");
  EXPECT_TRUE(vocab.tensors().empty());
  // Vocab-only: the file ends right after the metadata, with no padding.
  EXPECT_EQ(vocab.data_offset(), vocab.file_size());
  const auto tokens = vocab.get_string_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 32000u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(tokens[260], "\xe2\x96\x81t");  // "▁t"
  EXPECT_EQ(vocab.get_float_array("tokenizer.ggml.scores").size(), 32000u);
  const auto token_types = vocab.get_int_array("tokenizer.ggml.token_type");
  ASSERT_EQ(token_types.size(), 32000u);
  EXPECT_EQ(token_types[0], 2);  // unknown
  EXPECT_EQ(token_types[1], 3);  // control
  EXPECT_EQ(token_types[3], 6);  // byte <0x00>
  EXPECT_EQ(vocab.get_uint("tokenizer.ggml.eos_token_id"), 2u);
  EXPECT_FALSE(vocab.get_bool("tokenizer.ggml.add_eos_token"));

  const GgufFile model(kTinyA + "f16.gguf");
  EXPECT_EQ(model.get_string_array("tokenizer.ggml.tokens"), tokens);
}

}  // namespace
}  // namespace lowbit
