// llama2.c's tokenizer.bin (karpathy/llama2.c, tokenizer.py export): int32
// max_token_length, then per token float32 score, int32 length, the bytes.
// The file does not store the token count: it is the model's vocab_size.
#pragma once

#include <cstdint>
#include <string>

#include "tokenizer/vocab.h"

namespace lowbit {

// A SentencePiece vocabulary as the GGUF of the same tokenizer would hold it:
// spaces back to U+2581, "\n<s>\n" / "\n</s>\n" back to <s> / </s>, llama2.c's
// fixed ids (0 unk, 1 bos, 2 eos, 3 + byte for <0xXX>). Throws Error naming
// the path and the token where the file is short or malformed.
Vocab read_vocab_llama2c(const std::string& path, int32_t n_vocab);

}  // namespace lowbit
