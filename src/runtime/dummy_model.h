// Dummy models of real shapes: random ternary weights with one scale per
// tensor (as trained BitNet weights have), random norms and a synthetic
// vocabulary of the real size. How the bitnet.cpp and AI-PC papers measure
// speed when the real weights are not at hand.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/ggml_types.h"
#include "core/thread_pool.h"

namespace lowbit {

struct DummyModelOptions {
  std::string shape = "bitnet-2b4t";      // model_shapes.h
  GgmlType type = GgmlType::I2_S;         // the ternary matrices: I2_S, TQ2_0, TQ1_0 or F16
  GgmlType head_type = GgmlType::F16;     // token embedding and output head: F16, Q8_0 or Q6_K (6.6 bits)
  uint64_t seed = 1;
};

// Writes the GGUF to path. progress(fraction) is called as tensors are made.
void write_dummy_model(const DummyModelOptions& options, const std::string& path, ThreadPool& pool,
                       const std::function<void(double)>& progress = {});

// Where the default model lives: $LOWBIT_CACHE, else $XDG_CACHE_HOME/lowbit,
// else ~/.cache/lowbit; the file name says shape, type and head type.
std::string default_model_path(const DummyModelOptions& options);

}  // namespace lowbit
