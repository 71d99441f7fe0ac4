// The sampling options of the commands that generate (run, chat).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "runtime/sampler.h"

namespace lowbit::tools {

// seed_given turns true when -s/--seed is on the command line (the default
// seed is the time). Both references must outlive the parse.
inline void add_sampling_options(CLI::App& app, SamplerParams& s, bool& seed_given) {
  app.add_option("--temp", s.temperature, "temperature (0: greedy)");
  app.add_option("--top-k", s.top_k, "top-k (0: off)");
  app.add_option("--top-p", s.top_p, "top-p (1: off)");
  app.add_option("--min-p", s.min_p, "min-p (0: off)");
  app.add_option("--repeat-penalty", s.repeat_penalty, "repetition penalty (1: off)");
  app.add_option("--presence-penalty", s.presence_penalty, "subtracted once from a recent token's logit (0: off)");
  app.add_option("--frequency-penalty", s.frequency_penalty, "subtracted per occurrence of a recent token (0: off)");
  app.add_option("--repeat-last-n", s.repeat_last_n, "tokens the penalties look back (-1: all)");
  app.add_option("-s,--seed", s.seed, "random seed (default: the time)")->each([&seed_given](const std::string&) {
    seed_given = true;
  });
}

}  // namespace lowbit::tools
