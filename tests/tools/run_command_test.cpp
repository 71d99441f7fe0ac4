// The `lowbit` program as a user runs it: stdout byte for byte, exit codes,
// error messages.
#include <gtest/gtest.h>

#include <fstream>

#include "fixtures.h"
#include "lowbit_cli.h"

namespace lowbit {
namespace {

using testing::fixture;
using testing::quote;
using testing::read_text;
using testing::run_lowbit;
using testing::Outcome;

class RunStories : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(RunStories, StdoutIsByteIdenticalToLlama2c) {
  const auto& [stem, prompt] = GetParam();
  const Outcome o = run_lowbit("run -m " + quote(fixture("llama2c/stories260K.bin")) + " -z " +
                               quote(fixture("llama2c/tok512.bin")) + " --temp 0 -n 128 -t 2 -p " + quote(prompt));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, read_text(fixture("oracles/stories260K__" + stem + ".stdout.txt")));
  EXPECT_NE(o.err.find("generated"), std::string::npos) << "summary line missing: " << o.err;
}

INSTANTIATE_TEST_SUITE_P(Oracles, RunStories,
                         ::testing::Values(std::make_pair("once_upon_a_time", "Once upon a time"),
                                           std::make_pair("lily_and_tom", "Lily and Tom"),
                                           std::make_pair("empty", "")),
                         [](const auto& info) { return info.param.first; });

TEST(RunCommand, DumpLogitsWritesOneValuePerLine) {
  const std::string out = testing::temp_path("logits.txt");
  const Outcome o = run_lowbit("run -m " + quote(fixture("llama2c/stories260K.bin")) + " -z " +
                               quote(fixture("llama2c/tok512.bin")) + " --temp 0 -n 8 -p 'Once upon a time'" +
                               " --dump-logits " + quote(out));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::vector<double> logits = testing::read_numbers(out);
  ASSERT_EQ(logits.size(), 512u);
  // Must equal step 1 of the oracle (the logits at the last prompt position).
  const std::vector<double> want = testing::read_numbers(fixture("oracles/stories260K__once_upon_a_time.first3_logits.txt"));
  for (size_t i = 0; i < 512; ++i) EXPECT_NEAR(logits[i], want[i], 1e-4) << i;
}

TEST(RunCommand, MissingModelFileFailsNamingIt) {
  const Outcome o = run_lowbit("run -m /nonexistent/model.gguf -p hi");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("/nonexistent/model.gguf"), std::string::npos) << o.err;
}

TEST(RunCommand, GarbageModelFileFailsNamingIt) {
  const std::string path = testing::temp_path("garbage.gguf");
  std::ofstream(path) << "GGUF this is not a model";
  const Outcome o = run_lowbit("run -m " + quote(path) + " -p hi");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find(path), std::string::npos) << o.err;
}

TEST(RunCommand, Llama2cCheckpointWithoutTokenizerIsAClearError) {
  const Outcome o = run_lowbit("run -m " + quote(fixture("llama2c/stories260K.bin")) + " -p hi");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("-z"), std::string::npos) << o.err;
}

TEST(RunCommand, PromptLongerThanContextIsAClearError) {
  const Outcome o = run_lowbit("run -m " + quote(fixture("llama2c/stories260K.bin")) + " -z " +
                               quote(fixture("llama2c/tok512.bin")) + " --ctx 4 -p 'Once upon a time there was'");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("context"), std::string::npos) << o.err;
}

// The penalties reach the sampler from the command line: greedy text that
// repeats itself (stories260K's does) changes.
TEST(RunCommand, PresenceAndFrequencyPenaltiesChangeGreedyText) {
  const std::string base = "run -m " + quote(fixture("llama2c/stories260K.bin")) + " -z " +
                           quote(fixture("llama2c/tok512.bin")) + " --temp 0 -n 128 -p 'Once upon a time'";
  const std::string oracle = read_text(fixture("oracles/stories260K__once_upon_a_time.stdout.txt"));
  for (const char* option : {" --presence-penalty 1.5", " --frequency-penalty 1.0"}) {
    const Outcome o = run_lowbit(base + option);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out.rfind("Once upon a time", 0), 0u) << o.out;
    EXPECT_NE(o.out, oracle) << option;
  }
}

TEST(GenModelCommand, TinyModelRunsAndGenerates) {
  const std::string path = testing::temp_path("gen-tiny-tq2_0.gguf");
  Outcome o = run_lowbit("gen-model --shape tiny --type tq2_0 -o " + quote(path));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = run_lowbit("run -m " + quote(path) + " -p 'hello world' -n 5 --temp 0.7 --seed 3");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("hello world", 0), 0u) << o.out;
  EXPECT_NE(o.err.find("generated 5 tokens"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace lowbit
