// Chat messages to the prompt text a model was trained on. The GGUF's Jinja
// template (tokenizer.chat_template) is not run: like llama.cpp, lowbit
// recognises the common formats by marks in it, and writes them out here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "tokenizer/vocab.h"

namespace lowbit {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// Each ends where the assistant's reply begins:
enum class ChatFormat {
  BitNet,   // BitNet b1.58 2B-4T: "Role: content<|eot_id|>" turns, then "Assistant: "
  Llama3,   // <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
  ChatML,   // <|im_start|>role\ncontent<|im_end|>\n (Qwen, SmolLM, many fine-tunes)
  Falcon3,  // <|role|>\ncontent\n (Falcon3, whose 1.58-bit models bitnet.cpp runs)
  Gemma,    // <start_of_turn>user\ncontent<end_of_turn>\n; "assistant" is "model", a system
            // message goes in front of the next user turn
  Plain,    // "role: content" lines, then "assistant:"
};

const char* chat_format_name(ChatFormat format);

// The format for a model: its architecture (BitNet b1.58), else the marks of
// its chat template (empty when the file has none), else Llama 3's header
// tokens in its vocabulary, else Plain.
ChatFormat detect_chat_format(Architecture arch, std::string_view chat_template, const Vocab& vocab);
ChatFormat detect_chat_format(const Model& model, const Vocab& vocab);

// Special tokens are written as text: encode the result with parse_special.
// Detect the format once per model: detection may scan the vocabulary.
std::string render_chat(ChatFormat format, const std::vector<ChatMessage>& messages);

}  // namespace lowbit
