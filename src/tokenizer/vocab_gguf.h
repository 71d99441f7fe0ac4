// The tokenizer.ggml.* keys of GGUF files, as llama.cpp reads and writes them.
#pragma once

#include "formats/gguf.h"
#include "formats/gguf_writer.h"
#include "tokenizer/vocab.h"

namespace lowbit {

// tokenizer.ggml.model "llama" (SentencePiece) or "gpt2" (byte-level BPE).
// Throws Error naming the file and the key that is missing or wrong.
Vocab read_vocab_gguf(const GgufFile& file);

// Sets the keys read_vocab_gguf reads (model, pre, tokens, scores,
// token_type, merges, special ids, add_bos_token, add_space_prefix).
void write_vocab_gguf(const Vocab& vocab, GgufWriter& writer);

}  // namespace lowbit
