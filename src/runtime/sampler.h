// Picks the next token from logits: repetition penalty, then top-k, top-p,
// min-p and temperature (llama.cpp's order), then a seeded draw.
// temperature <= 0 means greedy (the first index of the largest logit).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.h"

namespace lowbit {

struct SamplerParams {
  float temperature = 0.8f;
  int32_t top_k = 40;           // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  int32_t repeat_last_n = 64;   // how many recent tokens the penalty looks at
  uint64_t seed = 0;
};

class Sampler {
 public:
  Sampler(const SamplerParams& params, int64_t n_vocab);
  // history: tokens so far (prompt and generated), most recent last.
  int32_t sample(const float* logits, std::span<const int32_t> history);

 private:
  struct Candidate {
    int32_t id;
    float logit;
  };
  SamplerParams params_;
  int64_t n_vocab_;
  Rng rng_;
  std::vector<Candidate> candidates_;  // [n_vocab], reused
  std::vector<float> probs_;           // [n_vocab], reused
  std::vector<bool> seen_;             // [n_vocab], reused by the repetition penalty
};

int32_t argmax(const float* logits, int64_t n);

}  // namespace lowbit
