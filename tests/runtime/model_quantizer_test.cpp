// `lowbit quantize` on stories260K (llama2.c) and gen-model dummies: the
// converted GGUF computes what the original does (exactly for F32, within a
// format's rounding otherwise), keeps the metadata, and ternarizes as BitNet.
#include "runtime/model_quantizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/half.h"
#include "fixtures.h"
#include "formats/gguf.h"
#include "model/decoder.h"
#include "model/model.h"
#include "quant/i2s.h"
#include "quant/weight_format.h"
#include "runtime/dummy_model.h"
#include "runtime/gguf_metadata_copy.h"
#include "runtime/tensor_quantizer.h"

namespace lowbit {
namespace {

using testing::fixture;

const std::vector<int32_t> kTokens = {1, 403, 261, 378, 275, 302, 407, 283, 293, 414, 276};

std::vector<float> logits_of(const std::string& path, ThreadPool& pool) {
  auto model = Model::load(path, LoadOptions{}, pool);
  Decoder d(*model, pool, 64, KvCacheType::F32);
  std::vector<float> out(kTokens.size() * static_cast<size_t>(model->config().n_vocab));
  d.eval(kTokens.data(), static_cast<int64_t>(kTokens.size()), out.data(), true);
  return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  return m;
}

std::string quantize_stories(const std::string& type) {
  ThreadPool pool(2);
  QuantizeOptions o;
  o.type = ggml_type_from_name(type);
  o.tokenizer = fixture("llama2c/tok512.bin");
  const std::string out = testing::temp_path("stories260K-" + type + ".gguf");
  quantize_model(fixture("llama2c/stories260K.bin"), out, o, pool);
  return out;
}

TEST(FitType, FallsBackAlongTheChain) {
  EXPECT_EQ(fit_type(GgmlType::Q4_0, 64, GgmlType::F32), GgmlType::Q4_0);
  EXPECT_EQ(fit_type(GgmlType::Q4_0, 172, GgmlType::F32), GgmlType::F32);   // 172 = 4 * 43
  EXPECT_EQ(fit_type(GgmlType::Q1_0, 64, GgmlType::F16), GgmlType::Q8_0);   // 128-blocks do not fit
  EXPECT_EQ(fit_type(GgmlType::TQ2_0, 256, GgmlType::F32), GgmlType::TQ2_0);
  EXPECT_EQ(fit_type(GgmlType::TQ1_0, 64, GgmlType::F32), GgmlType::Q2_0);  // still ternary codes
  EXPECT_EQ(fit_type(GgmlType::I2_S, 128, GgmlType::F32), GgmlType::I2_S);
  EXPECT_EQ(fit_type(GgmlType::I2_S, 64, GgmlType::F32), GgmlType::Q2_0);   // I2_S needs 128-weight rows
  EXPECT_EQ(fit_type(GgmlType::I2_S, 96, GgmlType::F32), GgmlType::Q8_0);
  EXPECT_EQ(fit_type(GgmlType::TQ2_0, 172, GgmlType::F32), GgmlType::F16);
}

TEST(QuantizeLlama2c, F32GgufGivesIdenticalLogits) {
  ThreadPool pool(2);
  const std::vector<float> want = logits_of(fixture("llama2c/stories260K.bin"), pool);
  const std::vector<float> got = logits_of(quantize_stories("f32"), pool);
  EXPECT_EQ(max_abs_diff(want, got), 0.0);  // no permutation of Q/K, same RoPE pairs, same math
}

TEST(QuantizeLlama2c, F16AndQ8_0StayClose) {
  ThreadPool pool(2);
  const std::vector<float> want = logits_of(fixture("llama2c/stories260K.bin"), pool);
  double max_logit = 0;
  for (float v : want) max_logit = std::max(max_logit, std::fabs(static_cast<double>(v)));
  const double f16 = max_abs_diff(want, logits_of(quantize_stories("f16"), pool)) / max_logit;
  const double q8 = max_abs_diff(want, logits_of(quantize_stories("q8_0"), pool)) / max_logit;
  std::printf("[ stories260K ] max |Δlogit| / max |logit| (%.3g): f16 %.3g, q8_0 %.3g\n", max_logit, f16, q8);
  // F16 rounds each weight by <= 2^-11 relative; Q8_0 by <= 1/254 of its block's max.
  EXPECT_LT(f16, 2e-3);
  EXPECT_LT(q8, 3e-2);
  EXPECT_GT(q8, f16);  // it did quantize something
}

TEST(QuantizeLlama2c, WritesLlamaMetadataAndTokenizer) {
  GgufFile f(quantize_stories("q4_0"));
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("general.file_type"), 2u);
  EXPECT_EQ(f.get_uint("llama.embedding_length"), 64u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count_kv"), 4u);
  EXPECT_EQ(f.get_uint("llama.feed_forward_length"), 172u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 512u);
  EXPECT_EQ(f.tensor("blk.0.attn_q.weight").type, GgmlType::Q4_0);
  EXPECT_EQ(f.tensor("blk.0.ffn_down.weight").type, GgmlType::F32);  // 172 fits no 32-block
  EXPECT_EQ(f.tensor("token_embd.weight").type, GgmlType::F32);      // kept by default
  EXPECT_EQ(f.tensor("blk.0.attn_norm.weight").type, GgmlType::F32);
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);                // shared classifier: tied
}

TEST(QuantizeLlama2c, WithoutTokenizerIsAClearError) {
  ThreadPool pool(1);
  try {
    quantize_model(fixture("llama2c/stories260K.bin"), testing::temp_path("x.gguf"), QuantizeOptions{}, pool);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("-z"), std::string::npos) << e.what();
  }
}

TEST(QuantizeTernary, AbsmeanTernarizesAsBitNet) {
  GgufFile src(quantize_stories("f32"));
  GgufFile f(quantize_stories("tq2_0"));
  const GgufTensorInfo& t = f.tensor("blk.1.attn_q.weight");
  ASSERT_EQ(t.type, GgmlType::Q2_0);  // 64-wide rows: TQ2_0's 256-blocks do not fit
  const GgufTensorInfo& s = src.tensor("blk.1.attn_q.weight");
  const float* w = reinterpret_cast<const float*>(s.data);
  // BitNet's weight_quant, written out here: gamma = mean |w|, t = clamp(round(w / gamma), -1, 1).
  double sum = 0;
  for (int64_t i = 0; i < s.n_elements; ++i) sum += std::fabs(w[i]);
  const float gamma = static_cast<float>(sum / static_cast<double>(s.n_elements));
  std::vector<float> got(static_cast<size_t>(t.n_elements));
  for (int64_t r = 0; r < t.rows(); ++r)
    weight_format(t.type).dequantize_row(t.data + row_offset(t.type, 64, r), got.data() + r * 64, 64);
  const float gamma16 = fp16_to_float(float_to_fp16(gamma));  // Q2_0 keeps d in fp16
  int64_t zeros = 0;
  for (int64_t i = 0; i < t.n_elements; ++i) {
    const float tern = std::clamp(std::nearbyint(w[i] * (1.0f / gamma)), -1.0f, 1.0f);
    zeros += tern == 0;
    ASSERT_EQ(got[static_cast<size_t>(i)], tern * gamma16) << i;
  }
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, t.n_elements);
}

TEST(QuantizeTernary, AlreadyTernaryFloatWeightsKeepTheirValuesInI2s) {
  ThreadPool pool(2);
  DummyModelOptions d;
  d.shape = "tiny";
  d.type = GgmlType::F16;
  d.seed = 3;
  const std::string in = testing::temp_path("tiny-f16.gguf"), out = testing::temp_path("tiny-f16-to-i2_s.gguf");
  write_dummy_model(d, in, pool);
  QuantizeOptions o;
  o.type = GgmlType::I2_S;
  const QuantizeResult r = quantize_model(in, out, o, pool);
  GgufFile a(in), b(out);
  // Every key kept, in order, with its value; only the file type changes.
  ASSERT_EQ(a.metadata().size() + 0, b.metadata().size());
  for (size_t i = 0; i < a.metadata().size(); ++i) {
    const auto& [ka, va] = a.metadata()[i];
    const auto& [kb, vb] = b.metadata()[i];
    ASSERT_EQ(ka, kb);
    if (ka == "general.file_type") continue;
    std::vector<uint8_t> ea, eb;
    encode_gguf_value(va, ea);
    encode_gguf_value(vb, eb);
    EXPECT_TRUE(ea == eb && va.type == vb.type) << ka;
  }
  EXPECT_EQ(b.get_uint("general.file_type"), 40u);
  const GgufTensorInfo& fs = a.tensor("blk.0.ffn_up.weight");
  const GgufTensorInfo& ft = b.tensor("blk.0.ffn_up.weight");
  ASSERT_EQ(ft.type, GgmlType::I2_S);
  std::vector<int8_t> trits(static_cast<size_t>(ft.n_elements));
  unpack_i2s(ft.data, ft.n_elements, trits.data());
  const float scale = i2s_tensor_scale(ft.data, ft.n_elements);
  for (int64_t i = 0; i < fs.n_elements; ++i) {
    uint16_t h;
    std::memcpy(&h, fs.data + 2 * i, 2);
    ASSERT_EQ(trits[static_cast<size_t>(i)] * scale, fp16_to_float(h)) << i;
  }
  EXPECT_EQ(b.tensor("token_embd.weight").type, GgmlType::F16);
  for (const TensorOutcome& t : r.tensors) EXPECT_TRUE(t.note.empty()) << t.name << ": " << t.note;
}

}  // namespace
}  // namespace lowbit
