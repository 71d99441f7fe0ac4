// Prefill attention over one KV head of BitNet 2B-4T's shape (128 dims, 4
// query heads per KV head, cache rows 640 values apart), single thread, the
// vector table this CPU runs: each token alone (attend_f16, decode's path)
// against blocks of 64 tokens (attend_block_f16, prefill's). Arguments:
// prompt tokens, then positions already cached before them. items/s counts
// the multiply-adds the causal attention needs (q.k and p.v), so the two
// rows of one shape compare directly, and against the core's FMA peak.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/half.h"
#include "core/rng.h"
#include "kernels/vector_ops.h"

namespace lowbit {
namespace {

constexpr int64_t kHeadDim = 128, kGroup = 4, kKvStride = 640, kQStride = 2560, kBlockTokens = 64;

struct PrefillAttention {
  int64_t tokens, depth;
  std::vector<uint16_t> k, v;
  std::vector<float> q, out;
  std::vector<int64_t> positions;
  double macs = 0;

  PrefillAttention(int64_t tokens_, int64_t depth_) : tokens(tokens_), depth(depth_) {
    Rng rng(7);
    // Random values read as rows (v) or slabs (k, key_slab_offset): whole slabs.
    const auto n_pos = static_cast<size_t>((depth + tokens + kKeySlab - 1) / kKeySlab * kKeySlab * kKvStride);
    for (size_t i = 0; i < n_pos; ++i) {
      k.push_back(float_to_fp16(static_cast<float>(rng.normal())));
      v.push_back(float_to_fp16(static_cast<float>(rng.normal())));
    }
    q.resize(static_cast<size_t>(tokens * kQStride));
    for (float& x : q) x = 0.1f * static_cast<float>(rng.normal());
    out.resize(q.size());
    for (int64_t i = 0; i < tokens; ++i) {
      positions.push_back(depth + i);
      macs += 2.0 * kGroup * kHeadDim * static_cast<double>(depth + i + 1);
    }
  }
};

void run(benchmark::State& state, bool blocks) {
  const VectorOps* ops = vector_ops();
  if (ops == nullptr) {
    state.SkipWithError("no vector table on this CPU");
    return;
  }
  PrefillAttention a(state.range(0), state.range(1));
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  std::vector<float> scratch(static_cast<size_t>(attend_block_scratch(kHeadDim)));
  std::vector<float> scores(static_cast<size_t>((a.depth + a.tokens) * kGroup));
  for (auto _ : state) {
    if (blocks) {
      for (int64_t t = 0; t < a.tokens; t += kBlockTokens) {
        const AttendBlock b = {a.q.data() + t * kQStride, kQStride,     a.out.data() + t * kQStride,
                               kQStride,                  a.positions.data() + t, std::min(kBlockTokens, a.tokens - t),
                               kGroup,                    kHeadDim,     kKvStride,
                               scale};
        ops->attend_block_f16(b, a.k.data(), a.v.data(), scratch.data());
      }
    } else {
      for (int64_t t = 0; t < a.tokens; ++t)
        ops->attend_f16(a.q.data() + t * kQStride, kGroup, a.k.data(), 0, a.v.data(), kKvStride, a.positions[t] + 1,
                        kHeadDim, scale, scores.data(), a.out.data() + t * kQStride, nullptr);
    }
    benchmark::DoNotOptimize(a.out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(a.macs) * state.iterations());
  state.SetLabel(ops->isa);
}

void BM_PrefillAttentionRowByRow(benchmark::State& state) { run(state, false); }
void BM_PrefillAttentionInBlocks(benchmark::State& state) { run(state, true); }
BENCHMARK(BM_PrefillAttentionRowByRow)->Args({128, 0})->Args({512, 0})->Args({512, 2048})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrefillAttentionInBlocks)->Args({128, 0})->Args({512, 0})->Args({512, 2048})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lowbit
