// `lowbit quantize`: rewrites a model's weight matrices in another GGUF type.
// Input: a GGUF (its metadata is kept, general.file_type updated) or a
// llama2.c checkpoint (written as a llama.cpp `llama` GGUF with the llama.*
// keys and the tokenizer given; Q and K need no permutation, since llama2.c's
// weights already use the interleaved RoPE pairs llama.cpp's `llama` applies).
// Only 2-D matrices are quantized; norms and other vectors keep their type;
// token_embd / output keep theirs unless embd_type says otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ggml_types.h"
#include "core/thread_pool.h"

namespace lowbit {

struct QuantizeOptions {
  GgmlType type = GgmlType::Q8_0;    // the matrices
  std::optional<GgmlType> embd_type;  // token_embd / output (default: as in the input)
  std::string tokenizer;              // llama2.c input: its tokenizer.bin
};

// What happened to one tensor.
struct TensorOutcome {
  std::string name;
  GgmlType from = GgmlType::F32;
  GgmlType to = GgmlType::F32;
  std::string note;  // why `to` is not what was asked (empty when it is)
};

struct QuantizeResult {
  std::vector<TensorOutcome> tensors;
  uint64_t bytes_in = 0;   // tensor data
  uint64_t bytes_out = 0;
};

// llama.cpp's general.file_type for a model mostly of `type` (bitnet.cpp's 40 for I2_S).
uint32_t llama_file_type(GgmlType type);

// Throws Error naming the file, tensor or option that is wrong.
// progress(fraction of the input's elements done).
QuantizeResult quantize_model(const std::string& input, const std::string& output, const QuantizeOptions& options,
                              ThreadPool& pool, const std::function<void(double)>& progress = {});

}  // namespace lowbit
