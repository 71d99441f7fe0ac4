// Chat messages to the prompt text a model was trained on. The GGUF's Jinja
// template is not run; the formats of the models lowbit targets are written
// out here.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "tokenizer/vocab.h"

namespace lowbit {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// The prompt for `messages`, ending where the assistant's reply begins:
//   BitNet b1.58 2B-4T: "Role: content<|eot_id|>" turns, then "Assistant: "
//   other vocabularies with Llama 3's header tokens: Llama 3's format
//   anything else: "role: content" lines, then "assistant:"
// Special tokens are written as text: encode the result with parse_special.
std::string render_chat(const Model& model, const Vocab& vocab, const std::vector<ChatMessage>& messages);

}  // namespace lowbit
