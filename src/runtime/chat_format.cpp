#include "runtime/chat_format.h"

#include <cctype>

namespace lowbit {

std::string render_chat(const Model& model, const Vocab& vocab, const std::vector<ChatMessage>& messages) {
  std::string text;
  if (model.config().arch == Architecture::BitNetB158) {
    for (const ChatMessage& m : messages) {
      std::string role = m.role;
      if (!role.empty()) role[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(role[0])));
      text += role + ": " + m.content + "<|eot_id|>";
    }
    return text + "Assistant: ";
  }
  if (find_token_by_names(vocab, {"<|start_header_id|>"}) >= 0 && find_token_by_names(vocab, {"<|eot_id|>"}) >= 0) {
    for (const ChatMessage& m : messages)
      text += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
    return text + "<|start_header_id|>assistant<|end_header_id|>\n\n";
  }
  for (const ChatMessage& m : messages) text += m.role + ": " + m.content + "\n";
  return text + "assistant:";
}

}  // namespace lowbit
