// The public API, on stories260K.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures.h"
#include "lowbit/lowbit.h"

namespace lowbit {
namespace {

using testing::fixture;

TEST(EngineApi, TokenizeLogitsAndGenerateMatchLlama2c) {
  EngineOptions o;
  o.model = fixture("llama2c/stories260K.bin");
  o.tokenizer = fixture("llama2c/tok512.bin");
  o.threads = 2;
  auto engine = Engine::open(o);
  EXPECT_EQ(engine->vocab_size(), 512);
  EXPECT_EQ(engine->context_length(), 512);

  const std::vector<int32_t> ids = engine->tokenize("Once upon a time");
  const std::vector<float> logits = engine->logits(ids);
  const std::vector<double> want =
      testing::read_numbers(fixture("oracles/stories260K__once_upon_a_time.first3_logits.txt"));
  for (size_t i = 0; i < 512; ++i) EXPECT_NEAR(logits[i], want[i], 1e-4) << i;

  GenerationParams p;
  p.n_predict = 20;
  p.temperature = 0;
  std::string text;
  const GenerationStats s = engine->generate("Once upon a time", p, [&](std::string_view t) { text += t; });
  EXPECT_EQ(s.prompt_tokens, static_cast<int64_t>(ids.size()));
  EXPECT_EQ(s.generated_tokens, 20);
  const std::string oracle = testing::read_text(fixture("oracles/stories260K__once_upon_a_time.stdout.txt"));
  EXPECT_EQ(oracle.substr(std::string("Once upon a time").size(), text.size()), text);
}

TEST(EngineApi, MissingFileIsAnErrorNamingIt) {
  EngineOptions o;
  o.model = "/no/such/model.gguf";
  try {
    Engine::open(o);
    FAIL() << "opened a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/model.gguf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lowbit
