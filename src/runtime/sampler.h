// Picks the next token from logits: the penalties on recent tokens
// (repetition, presence, frequency), then top-k, top-p, min-p and temperature
// (llama.cpp's order), then a seeded draw.
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
  float repeat_penalty = 1.0f;  // 1: off; a recent token's logit is divided by it (multiplied if negative)
  float presence_penalty = 0;   // 0: off; subtracted from a recent token's logit once
  float frequency_penalty = 0;  // 0: off; subtracted once per time the token occurs
  int32_t repeat_last_n = 64;   // how many recent tokens the penalties look at (< 0: all)
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
  std::vector<int32_t> recent_;        // [repeat_last_n], the penalties' window, sorted
};

int32_t argmax(const float* logits, int64_t n);

// Throws Error naming the first logit that is NaN or +inf, `who` first, if
// there is one. A sound model computes neither: a NaN orders nothing (a sort
// with one is undefined behaviour; log_sum_exp passes over it) and a +inf
// makes every probability NaN. -inf is allowed: a token that cannot be drawn.
void require_finite_logits(const float* logits, int64_t n, const char* who);

}  // namespace lowbit
