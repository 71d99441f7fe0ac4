// stories260K (a real llama2.c model) against what llama2.c's run.c printed
// and computed for it: prompt ids, generated ids, text, first three logits.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "fixtures.h"
#include "model/decoder.h"
#include "model/model.h"
#include "runtime/generator.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_hf_json.h"
#include "tokenizer/vocab_llama2c.h"

namespace lowbit {
namespace {

using testing::fixture;
using testing::read_numbers;
using testing::read_text;

struct Oracle {
  std::string name;  // file stem in fixtures/oracles
};

class Stories260K : public ::testing::TestWithParam<Oracle> {};

TEST_P(Stories260K, MatchesLlama2cOracle) {
  const std::string stem = "oracles/stories260K__" + GetParam().name;
  const auto oracle = nlohmann::json::parse(read_text(fixture(stem + ".json")));
  ThreadPool pool(2);
  auto model = Model::load(fixture("llama2c/stories260K.bin"), LoadOptions{}, pool);
  auto tokenizer = Tokenizer::create(read_vocab_llama2c(fixture("llama2c/tok512.bin"), 512));

  const std::string prompt = oracle["prompt"];
  const std::vector<int32_t> ids = tokenizer->encode(prompt, true, false);
  EXPECT_EQ(ids, oracle["prompt_ids_with_bos"].get<std::vector<int32_t>>());

  // Generated ids and printed text, greedy, llama2.c's rules.
  Decoder decoder(*model, pool, 64, KvCacheType::F32);
  GenerateOptions g;
  g.n_predict = 128;
  g.sampling.temperature = 0;
  g.llama2c_rules = true;
  std::string text;
  const GenerateResult r = generate_text(decoder, *tokenizer, ids, g, [&](std::string_view s) { text += s; });
  std::vector<int32_t> expected_ids = oracle["generated_ids"].get<std::vector<int32_t>>();
  if (!expected_ids.empty() && expected_ids.back() == 1) expected_ids.pop_back();  // BOS ends, never printed
  EXPECT_EQ(r.generated, expected_ids);
  EXPECT_EQ(text + "\n", read_text(fixture(stem + ".stdout.txt")));

  // The logits that chose generated tokens 1, 2 and 3.
  const std::vector<double> want = read_numbers(fixture(stem + ".first3_logits.txt"));
  ASSERT_EQ(want.size(), 3u * 512);
  Decoder replay(*model, pool, 64, KvCacheType::F32);
  std::vector<float> logits(512);
  replay.eval(ids.data(), static_cast<int64_t>(ids.size()), logits.data());
  double max_diff = 0;
  for (int step = 0; step < 3; ++step) {
    if (step > 0) replay.eval(&r.generated[static_cast<size_t>(step - 1)], 1, logits.data());
    for (int i = 0; i < 512; ++i)
      max_diff = std::max(max_diff, std::fabs(logits[static_cast<size_t>(i)] - want[static_cast<size_t>(step * 512 + i)]));
  }
  std::printf("[ stories260K/%s ] max |logit - llama2.c| over 3 steps: %.3g\n", GetParam().name.c_str(), max_diff);
  EXPECT_LE(max_diff, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Oracles, Stories260K,
                         ::testing::Values(Oracle{"once_upon_a_time"}, Oracle{"lily_and_tom"}, Oracle{"empty"}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace lowbit
