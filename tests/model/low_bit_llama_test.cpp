// A Llama GGUF whose matrices are llama.cpp's Q2_0 / Q1_0 (and a Q8_0 head)
// runs through the AI-PC kernels (int2, int1, q8_0) with logits bitwise equal
// to the scalar reference's: the kernels are exact, so nothing else may differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/cpu_features.h"
#include "core/rng.h"
#include "fixtures.h"
#include "formats/gguf_writer.h"
#include "model/decoder.h"
#include "model/model.h"
#include "quant/weight_format.h"

namespace lowbit {
namespace {

constexpr int64_t kD = 128, kHeads = 4, kKvHeads = 2, kHeadDim = 32, kF = 256, kV = 64, kLayers = 2;

// Writes the tiny model (rows == 1: a vector); every tensor's bytes live in `store` until write().
std::string write_low_bit_llama(std::vector<std::vector<uint8_t>>& store) {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.context_length", 64);
  w.set_u32("llama.embedding_length", kD);
  w.set_u32("llama.block_count", kLayers);
  w.set_u32("llama.feed_forward_length", kF);
  w.set_u32("llama.attention.head_count", kHeads);
  w.set_u32("llama.attention.head_count_kv", kKvHeads);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  Rng rng(2024);
  auto add = [&](const std::string& name, GgmlType type, int64_t rows, int64_t cols, float amp) {
    std::vector<float> x(static_cast<size_t>(rows * cols));
    for (auto& v : x) v = amp * static_cast<float>(rng.normal());
    const int64_t row_bytes = ggml_row_bytes(type, cols);
    store.emplace_back(static_cast<size_t>(row_bytes * rows));
    for (int64_t r = 0; r < rows; ++r)
      weight_format(type).quantize_row(&x[r * cols], store.back().data() + r * row_bytes, cols);
    const std::vector<int64_t> shape = rows == 1 ? std::vector<int64_t>{cols} : std::vector<int64_t>{cols, rows};
    w.add_tensor(name, type, shape, store.back().data(), store.back().size());
  };
  add("token_embd.weight", GgmlType::F32, kV, kD, 1.0f);
  add("output_norm.weight", GgmlType::F32, 1, kD, 1.0f);
  add("output.weight", GgmlType::Q8_0, kV, kD, 0.1f);
  for (int i = 0; i < kLayers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    add(b + "attn_norm.weight", GgmlType::F32, 1, kD, 1.0f);
    add(b + "attn_q.weight", GgmlType::Q2_0, kHeads * kHeadDim, kD, 0.1f);
    add(b + "attn_k.weight", GgmlType::Q2_0, kKvHeads * kHeadDim, kD, 0.1f);
    add(b + "attn_v.weight", GgmlType::Q2_0, kKvHeads * kHeadDim, kD, 0.1f);
    add(b + "attn_output.weight", GgmlType::Q2_0, kD, kHeads * kHeadDim, 0.1f);
    add(b + "ffn_norm.weight", GgmlType::F32, 1, kD, 1.0f);
    add(b + "ffn_gate.weight", GgmlType::Q1_0, kF, kD, 0.1f);
    add(b + "ffn_up.weight", GgmlType::Q1_0, kF, kD, 0.1f);
    add(b + "ffn_down.weight", GgmlType::Q2_0, kD, kF, 0.1f);
  }
  const std::string path = testing::temp_path("low_bit_llama.gguf");
  w.write(path);
  return path;
}

// Logits of every position of a short prompt, evaluated as one batch then one token.
std::vector<float> logits_of(const std::string& path, const std::string& kernel, std::string* kernels) {
  ThreadPool pool(2);
  LoadOptions options;
  options.kernel = kernel;
  const auto model = Model::load(path, options, pool);
  *kernels = model->describe_kernels();
  Decoder decoder(*model, pool);
  const std::vector<int32_t> prompt = {1, 7, 42, 3, 63};
  std::vector<float> logits(prompt.size() * kV), last(kV);
  decoder.eval(prompt.data(), static_cast<int64_t>(prompt.size()) - 1, logits.data(), /*all_logits=*/true);
  decoder.eval(&prompt.back(), 1, last.data());
  std::copy(last.begin(), last.end(), logits.end() - kV);
  return logits;
}

TEST(LowBitLlama, AiPcKernelsGiveTheReferenceLogits) {
  std::vector<std::vector<uint8_t>> store;
  const std::string path = write_low_bit_llama(store);
  std::string ref_kernels, auto_kernels;
  const std::vector<float> expect = logits_of(path, "ref", &ref_kernels);
  const std::vector<float> got = logits_of(path, "auto", &auto_kernels);
  ASSERT_EQ(got.size(), expect.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expect[i]) << "logit " << i;
  float spread = 0;
  for (float v : expect) spread = std::max(spread, std::fabs(v));
  EXPECT_GT(spread, 0.0f);  // the model computes something
#if LOWBIT_NEON_KERNELS  // int2, int1 and q8_0 have NEON kernels (int1_lut and the 4-bit ones do not)
  if (cpu_features().has_neon_level()) {
    EXPECT_NE(auto_kernels.find("int2/neon-dotprod"), std::string::npos) << auto_kernels;
    EXPECT_NE(auto_kernels.find("int1/neon-dotprod"), std::string::npos) << auto_kernels;
    EXPECT_NE(auto_kernels.find("q8_0/neon-dotprod"), std::string::npos) << auto_kernels;
    EXPECT_EQ(auto_kernels.find("int1_lut/"), std::string::npos) << auto_kernels;
  }
#endif
#if LOWBIT_X86_KERNELS  // on x86 int1_lut competes with int1
  EXPECT_NE(auto_kernels.find("int2/"), std::string::npos) << auto_kernels;
  // Q1_0: int1_lut on plain AVX2, int1 with VNNI; the other one forced below.
  const bool lut = auto_kernels.find("int1_lut/") != std::string::npos;
  EXPECT_TRUE(lut || auto_kernels.find("int1/") != std::string::npos) << auto_kernels;
  EXPECT_NE(auto_kernels.find("q8_0/"), std::string::npos) << auto_kernels;
  std::string forced_kernels;
  const std::vector<float> forced = logits_of(path, lut ? "int1+int2+q8_0" : "int1_lut+int2+q8_0", &forced_kernels);
  EXPECT_NE(forced_kernels.find(lut ? "int1/" : "int1_lut/"), std::string::npos) << forced_kernels;
  ASSERT_EQ(forced.size(), expect.size());
  for (size_t i = 0; i < forced.size(); ++i) ASSERT_EQ(forced[i], expect[i]) << "logit " << i << " (" << forced_kernels << ")";
#endif
}

}  // namespace
}  // namespace lowbit
