// The tokenizer for a model: its own GGUF vocabulary, or a file named by the
// user (llama2.c tokenizer.bin, Hugging Face tokenizer.json, a vocab GGUF).
#pragma once

#include <memory>
#include <string>

#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace lowbit {

// path empty: the model's vocabulary (llama2.c checkpoints have none: Error asking for -z).
// Throws Error when the vocabulary size differs from the model's.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, const Model& model);

}  // namespace lowbit
