// Vocabularies of real size and structure made from a seed, so tools can write
// test models (gen-model) and tests can exercise the tokenizers without
// downloading anything. The tokens are random but the structure is valid.
#pragma once

#include <cstdint>

#include "tokenizer/vocab.h"

namespace lowbit {

// Byte-level BPE ("llama-bpe") of exactly n_tokens: the 256 byte tokens, then
// merged tokens each made by a merge of two earlier tokens, then n_special
// control tokens named as Llama 3's (<|begin_of_text|> = bos, <|end_of_text|>
// = eos, <|eot_id|> = eot at Llama 3's offsets). With more merges than merged
// tokens the extra merges are other splits of a token into two tokens (as real
// vocabularies have); with fewer, the last merged tokens have none (as added
// tokens). Every merge "a b" has a, b and ab in the vocabulary.
// BitNet b1.58 2B-4T's shape: (128256, 256, 280147). Error when the sizes cannot be met.
Vocab make_synthetic_bpe_vocab(int32_t n_tokens, int32_t n_special, int32_t n_merges, uint64_t seed);

// SentencePiece in Llama 2's layout: <unk> <s> </s>, the 256 <0xXX> byte
// tokens, pieces (concatenations of earlier pieces, scores falling with
// creation order, U+2581 only at the start), then the single characters.
Vocab make_synthetic_spm_vocab(int32_t n_tokens, uint64_t seed);

}  // namespace lowbit
