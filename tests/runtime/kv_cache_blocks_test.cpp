// The decoder's KV cache holds positions in blocks (Decoder's kv_block), each
// KV head's rows of a block together. Decode walks a range of positions block
// by block, each head's softmax continued from block to block, and merges the
// ranges a step is split into over threads; prefill's blocks of queries go
// chunk by chunk. With blocks of 64 or 128 positions, every path must give
// the logits of a cache in one block, up to float reassociation. The model is
// stories260K (float weights, 4 KV heads of 2, 512 positions): a BitNet
// model's int8 activations turn a reassociation's last bit into a different
// rounding now and then, and its logits then move by ~1% (it happened with the
// AVX2 and NEON tables).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "fixtures.h"
#include "model/decoder.h"
#include "model/model.h"

namespace lowbit {
namespace {

struct Logits {
  std::vector<float> prompt_logits;  // [prompt][V]
  std::vector<float> step_logits;    // [steps][V]
};

// A 300-token prompt in passes of up to 128 tokens (each attends across
// blocks in prefill's query blocks), then 40 tokens one at a time.
Logits run(const Model& model, ThreadPool& pool, KvCacheType type, int64_t kv_block) {
  const int64_t V = model.config().n_vocab;
  std::vector<int32_t> prompt;
  for (int32_t i = 0; i < 300; ++i) prompt.push_back((17 + 37 * i) % 512);
  Decoder decoder(model, pool, 128, type, 1, kv_block);
  Logits r;
  r.prompt_logits.resize(prompt.size() * static_cast<size_t>(V));
  decoder.eval(prompt.data(), static_cast<int64_t>(prompt.size()), r.prompt_logits.data(), /*all_logits=*/true);
  std::vector<float> logits(static_cast<size_t>(V));
  for (int32_t i = 0; i < 40; ++i) {
    const int32_t token = (5 + 11 * i) % 512;
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
  ThreadPool one(1), two(2), three(3);
  const auto model = Model::load(testing::fixture("llama2c/stories260K.bin"), LoadOptions{}, three);
  ASSERT_GE(model->n_ctx(), 340);
  ASSERT_LE(model->n_ctx(), kKvBlockPositions) << "the default must hold the context in one block";
  // 2 and 3 threads split a decode step by position: 2 into ranges of whole
  // blocks of 64 (Decoder::attention cuts at blocks from 2 x threads x 64
  // positions on), 3 into ranges that start and end inside blocks.
  for (const KvCacheType type : {KvCacheType::F16, KvCacheType::F32}) {
    const Logits whole = run(*model, one, type, kKvBlockPositions);
    for (ThreadPool* pool : {&one, &two, &three}) {
      for (const int64_t block : {64, 128}) {
        SCOPED_TRACE(::testing::Message() << (type == KvCacheType::F16 ? "f16" : "f32") << " cache, " << pool->size()
                                        << " threads, blocks of " << block);
        const Logits blocks = run(*model, *pool, type, block);
        // An f16 cache rounds k and v: a reassociation's last bit now and
        // then takes an element to the neighbouring half (2.3e-4 of the logits
        // seen under NEON). Planted bugs in the block paths gave 0.27-1.5.
        const double tolerance = type == KvCacheType::F16 ? 1e-3 : 1e-4;
        EXPECT_LE(relative_diff(whole.prompt_logits, blocks.prompt_logits), tolerance);
        EXPECT_LE(relative_diff(whole.step_logits, blocks.step_logits), tolerance);
      }
    }
  }
}

// A context the machine cannot hold (the length may come from a file's
// context_length) is refused naming the model, the size and --ctx; one past
// what 64-bit sizes address is refused before any product overflows.
TEST(KvCacheBlocks, AContextTooLargeIsRefusedNamingTheOption) {
  ThreadPool pool(1);
  for (int64_t n_ctx : {int64_t{1} << 40, int64_t{1} << 61}) {
    LoadOptions options;
    options.n_ctx = n_ctx;
    const std::string path = testing::fixture("llama2c/stories260K.bin");
    const auto model = Model::load(path, options, pool);
    try {
      Decoder decoder(*model, pool, 1);
      ADD_FAILURE() << n_ctx << " positions: a decoder was made";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(path + ": the KV cache of 1 sequence of " + std::to_string(n_ctx) + " positions needs ", 0),
                0u)
          << message;
      EXPECT_NE(message.find("pass a smaller context with --ctx"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace lowbit
