// BitNet GGUF files written by bitnet.cpp's and llama.cpp's own tools, and
// the logits those engines computed on them (fixtures/peer/README.md).
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures.h"
#include "formats/gguf.h"
#include "model/decoder.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_hf_json.h"
#include "tokenizer/vocab_llama2c.h"

namespace lowbit {
namespace {

using testing::fixture;
using testing::read_numbers;

struct PeerCase {
  std::string type;       // f16, i2_s, tq2_0, tq1_0
  double tolerance;       // max |logit difference| accepted
};

class PeerLogits : public ::testing::TestWithParam<PeerCase> {};

TEST_P(PeerLogits, MatchEachPeer) {
  const PeerCase& c = GetParam();
  ThreadPool pool(2);
  auto model = Model::load(fixture("peer/tiny-a/tiny-a-" + c.type + ".gguf"), LoadOptions{}, pool);
  auto tokenizer = Tokenizer::create(read_vocab_gguf(*model->gguf()));
  const std::vector<int32_t> ids = tokenizer->encode("Once upon a time there was", true, false);

  Decoder decoder(*model, pool, 64, KvCacheType::F16);
  std::vector<float> logits(static_cast<size_t>(model->config().n_vocab));
  decoder.eval(ids.data(), static_cast<int64_t>(ids.size()), logits.data());

  int peers = 0;
  for (const std::string engine : {"bitnet", "llama"}) {
    if (engine == "llama" && c.type == "i2_s") continue;  // llama.cpp cannot read I2_S
    ++peers;
    const std::string dir = "peer/tiny-a/" + engine + "-" + c.type;
    const std::vector<double> want_ids = read_numbers(fixture(dir + "/prompt_tokens.txt"));
    ASSERT_EQ(ids.size(), want_ids.size()) << engine;
    for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], static_cast<int32_t>(want_ids[i])) << engine;
    const std::vector<double> want = read_numbers(fixture(dir + "/logits_last.txt"));
    ASSERT_EQ(want.size(), logits.size()) << engine;
    double max_diff = 0;
    for (size_t i = 0; i < want.size(); ++i) max_diff = std::max(max_diff, std::fabs(logits[i] - want[i]));
    std::printf("[ tiny-a %s ] max |lowbit - %s.cpp| = %.4f (tolerance %.2f)\n", c.type.c_str(), engine.c_str(),
                max_diff, c.tolerance);
    EXPECT_LE(max_diff, c.tolerance) << engine;
  }
  EXPECT_GT(peers, 0);
}

INSTANTIATE_TEST_SUITE_P(TinyA, PeerLogits,
                         ::testing::Values(PeerCase{"f16", 0.05}, PeerCase{"i2_s", 0.35}, PeerCase{"tq2_0", 0.35},
                                           PeerCase{"tq1_0", 0.35}),
                         [](const auto& info) { return info.param.type; });

}  // namespace
}  // namespace lowbit
