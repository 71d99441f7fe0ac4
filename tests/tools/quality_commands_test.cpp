// `lowbit perplexity`, `verify` and `quantize` as a user runs them.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "lowbit_cli.h"

namespace lowbit {
namespace {

using testing::fixture;
using testing::quote;
using testing::run_lowbit;

const std::string kStories = "-m " + quote(fixture("llama2c/stories260K.bin")) + " -z " +
                             quote(fixture("llama2c/tok512.bin")) + " -t 2";

// A few hundred tokens of TinyStories-like text: the oracles' outputs, twice.
std::string story_text() {
  const std::string path = testing::temp_path("stories-text.txt");
  std::string text;
  for (const char* stem : {"once_upon_a_time", "lily_and_tom", "empty"})
    text += testing::read_text(fixture(std::string("oracles/stories260K__") + stem + ".stdout.txt"));
  std::ofstream(path, std::ios::binary) << text << text;
  return path;
}

double number_after(const std::string& text, const std::string& label) {
  const std::smatch m = [&] {
    std::smatch r;
    std::regex_search(text, r, std::regex(label + R"(\s*=\s*([-0-9.e+]+))"));
    return r;
  }();
  EXPECT_FALSE(m.empty()) << "no '" << label << "' in: " << text;
  return m.empty() ? NAN : std::stod(m[1].str());
}

TEST(PerplexityCommand, PrintsAFinalEstimateAndComparesWithItsOwnBase) {
  const std::string text = story_text(), base = testing::temp_path("stories.lp");
  testing::Outcome o = run_lowbit("perplexity " + kStories + " -c 64 -f " + quote(text) + " --kld-base " + quote(base));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const double ppl = number_after(o.out, "Final estimate: PPL");
  EXPECT_GT(ppl, 1.0);
  EXPECT_LT(ppl, 50.0);  // the model's own kind of text
  EXPECT_NE(o.out.find("+/-"), std::string::npos);
  EXPECT_NE(o.out.find("[1]"), std::string::npos);

  o = run_lowbit("perplexity " + kStories + " -c 64 -f " + quote(text) + " --kld " + quote(base));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NEAR(number_after(o.out, "Mean KLD"), 0.0, 1e-6);
  EXPECT_EQ(number_after(o.out, "Same top-1"), 100.0);
  EXPECT_NEAR(number_after(o.out, "PPL\\(base\\)"), ppl, 1e-3 * ppl);

  // Another context is another measurement: refused, naming the option.
  o = run_lowbit("perplexity " + kStories + " -c 32 -f " + quote(text) + " --kld " + quote(base));
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("-c 64"), std::string::npos) << o.err;
}

TEST(PerplexityCommand, TextShorterThanTheContextIsAClearError) {
  const std::string path = testing::temp_path("short.txt");
  std::ofstream(path) << "Once upon a time";
  const testing::Outcome o = run_lowbit("perplexity " + kStories + " -c 64 -f " + quote(path));
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("64"), std::string::npos) << o.err;
}

TEST(VerifyCommand, LosslessKernelsPassOnATernaryDummy) {
  const std::string model = testing::temp_path("verify-tiny-i2_s.gguf");
  testing::Outcome o = run_lowbit("gen-model --shape tiny --type i2_s --seed 4 -o " + quote(model));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = run_lowbit("verify -t 2 -m " + quote(model));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("ok (lossless)"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("FAIL"), std::string::npos) << o.out;
  // With no room for float noise at all, the same differences fail, and verify says so.
  o = run_lowbit("verify -t 2 --tolerance 0 -m " + quote(model));
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("FAIL"), std::string::npos) << o.out;
}

TEST(QuantizeCommand, Llama2cToQ8_0RunsAndReportsFallbacks) {
  const std::string out = testing::temp_path("cli-stories-q8_0.gguf");
  testing::Outcome o = run_lowbit("quantize " + quote(fixture("llama2c/stories260K.bin")) + " " + quote(out) +
                                  " --type q8_0 -z " + quote(fixture("llama2c/tok512.bin")));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("blk.0.ffn_down.weight: row length 172"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("30 tensors f32 -> q8_0"), std::string::npos) << o.err;
  o = run_lowbit("run -t 2 -m " + quote(out) + " -p 'Once upon a time' -n 16 --temp 0");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("Once upon a time", 0), 0u) << o.out;
}

// k-quant mixes (Q4_K, Q3_K or Q2_K matrices, a Q6_K embedding / head, as
// llama.cpp's Q4_K_M, Q3_K and Q2_K files hold), and the older Q4_1, Q5_0,
// Q5_1, written from a float dummy: the float families run them, one token
// and many (the prompt), within verify's lossless tolerance of the reference.
TEST(QuantizeCommand, BlockQuantMixesRunLosslessly) {
  const std::string f16 = testing::temp_path("kquant-tiny-f16.gguf");
  testing::Outcome o = run_lowbit("gen-model --shape tiny --type f16 --seed 5 -o " + quote(f16));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const auto& [type, family] : std::vector<std::pair<std::string, std::string>>{
           {"q4_K", "q4_k"}, {"q3_K", "q3_k"}, {"q2_K", "q2_k"}, {"q4_1", "q4_1"}, {"q5_0", "q4_1"}, {"q5_1", "q4_1"},
           {"iq4_xs", "iq4_xs"}}) {
    const std::string mix = testing::temp_path("kquant-tiny-" + type + ".gguf");
    o = run_lowbit("quantize " + quote(f16) + " " + quote(mix) + " --type " + type + " --embd-type q6_K");
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_NE(o.err.find("f16 -> " + type), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("f16 -> q6_K"), std::string::npos) << o.err;
    o = run_lowbit("verify -t 2 -m " + quote(mix));
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
#if LOWBIT_X86_KERNELS  // the block formats' float kernels are AVX2 code: elsewhere ref runs them
    EXPECT_NE(o.out.find(" " + family + "/"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find(" q6_k/"), std::string::npos) << o.out;
#endif
    EXPECT_NE(o.out.find("ok (lossless)"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("FAIL"), std::string::npos) << o.out;
  }
}

// --kernel names what verify compares: a group ("q8k") is one row with each
// of its families on the matrices it takes; an unknown name is an error.
TEST(VerifyCommand, KernelGroupIsOneRowAndUnknownNamesFail) {
  const std::string f16 = testing::temp_path("verify-group-tiny-f16.gguf");
  testing::Outcome o = run_lowbit("gen-model --shape tiny --type f16 --seed 6 -o " + quote(f16));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string mix = testing::temp_path("verify-group-tiny-q3_K.gguf");
  o = run_lowbit("quantize " + quote(f16) + " " + quote(mix) + " --type q3_K --embd-type q6_K");
  ASSERT_EQ(o.exit_code, 0) << o.err;
#if LOWBIT_X86_KERNELS  // the Q8_K families are AVX2 code
  o = run_lowbit("verify -t 2 --kernel q8k -m " + quote(mix));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("\nq8k "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("q3_k_q8k/"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("q6_k_q8k/"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("approximate"), std::string::npos) << o.out;
#endif
  o = run_lowbit("verify -t 2 --kernel nope -m " + quote(mix));
  EXPECT_NE(o.exit_code, 0) << o.out;
  EXPECT_NE(o.err.find("'nope'"), std::string::npos) << o.err;
}

TEST(QuantizeCommand, UnknownTypeIsRefused) {
  const testing::Outcome o = run_lowbit("quantize " + quote(fixture("llama2c/stories260K.bin")) + " " +
                                        quote(testing::temp_path("never.gguf")) + " --type iq2_xxs");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("iq2_xxs"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace lowbit
