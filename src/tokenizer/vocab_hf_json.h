// Hugging Face tokenizers' tokenizer.json with a byte-level BPE model
// (GPT-2, Llama 3): model.vocab, model.merges, added_tokens, pre_tokenizer.
#pragma once

#include <string>

#include "tokenizer/vocab.h"

namespace lowbit {

// Added tokens with "special": true become control tokens, the others
// user-defined. The pre-tokenizer must be one of pre_tokenizer.h's table
// (Llama 3's Split regex, or GPT-2's ByteLevel regex). BOS/EOS/EOT are found
// by name (<|begin_of_text|>, <s> / <|end_of_text|>, </s>, <|endoftext|> /
// <|eot_id|>, ...) since tokenizer.json does not name them. Throws Error
// naming the path and the field that is missing or unsupported.
Vocab read_vocab_hf_json(const std::string& path);

}  // namespace lowbit
