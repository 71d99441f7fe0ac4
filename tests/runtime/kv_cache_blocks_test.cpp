// The decoder's KV cache holds positions in blocks (Decoder's kv_block), each
// KV head's rows of a block together. Attention that crosses blocks goes piece
// by piece and merges the pieces (decode), or chunk by chunk (prefill's
// blocks of queries). With blocks of 64 positions on the tiny BitNet shape
// (256 positions of context), every path must give the logits of a cache in
// one block, up to float reassociation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fixtures.h"
#include "model/decoder.h"
#include "model/model.h"
#include "runtime/dummy_model.h"

namespace lowbit {
namespace {

struct Logits {
  std::vector<float> prompt_logits;  // [prompt][V]
  std::vector<float> step_logits;    // [steps][V]
};

// A 200-token prompt in passes of up to 128 tokens (both attend across
// blocks in prefill's query blocks), then 20 tokens one at a time.
Logits run(const Model& model, ThreadPool& pool, KvCacheType type, int64_t kv_block) {
  const int64_t V = model.config().n_vocab;
  std::vector<int32_t> prompt;
  for (int32_t i = 0; i < 200; ++i) prompt.push_back((17 + 37 * i) % 1000);
  Decoder decoder(model, pool, 128, type, 1, kv_block);
  Logits r;
  r.prompt_logits.resize(prompt.size() * static_cast<size_t>(V));
  decoder.eval(prompt.data(), static_cast<int64_t>(prompt.size()), r.prompt_logits.data(), /*all_logits=*/true);
  std::vector<float> logits(static_cast<size_t>(V));
  for (int32_t i = 0; i < 20; ++i) {
    const int32_t token = (5 + 11 * i) % 1000;
    decoder.eval(&token, 1, logits.data());
    r.step_logits.insert(r.step_logits.end(), logits.begin(), logits.end());
  }
  return r;
}

// max |a - b| over max |a|.
double relative_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double max_abs = 0, max_diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(a[i])));
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  EXPECT_GT(max_abs, 0.1);
  return max_diff / max_abs;
}

TEST(KvCacheBlocks, SmallBlocksGiveTheLogitsOfOneBlock) {
  ThreadPool one(1), three(3);
  const std::string path = testing::temp_path("kv-blocks-tiny-i2_s.gguf");
  DummyModelOptions opt;
  opt.shape = "tiny";
  opt.type = GgmlType::I2_S;
  opt.seed = 11;
  write_dummy_model(opt, path, one);
  const auto model = Model::load(path, LoadOptions{}, three);
  ASSERT_GE(model->n_ctx(), 220);
  ASSERT_LE(model->n_ctx(), kKvBlockPositions) << "the default must hold the context in one block";
  // 3 threads split a decode step's items by position (2 KV heads do not
  // spread over 3), so ranges cross blocks as parts of a longer range too.
  ASSERT_NE(model->config().n_head_kv % three.size(), 0);
  for (const KvCacheType type : {KvCacheType::F16, KvCacheType::F32}) {
    const Logits whole = run(*model, one, type, kKvBlockPositions);
    for (ThreadPool* pool : {&one, &three}) {
      for (const int64_t block : {64, 128}) {
        SCOPED_TRACE(::testing::Message() << (type == KvCacheType::F16 ? "f16" : "f32") << " cache, " << pool->size()
                                        << " threads, blocks of " << block);
        const Logits blocks = run(*model, *pool, type, block);
        EXPECT_LE(relative_diff(whole.prompt_logits, blocks.prompt_logits), 1e-5);
        EXPECT_LE(relative_diff(whole.step_logits, blocks.step_logits), 1e-5);
      }
    }
  }
}

}  // namespace
}  // namespace lowbit
