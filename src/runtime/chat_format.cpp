#include "runtime/chat_format.h"

#include <cctype>

#include "formats/gguf.h"

namespace lowbit {

const char* chat_format_name(ChatFormat format) {
  switch (format) {
    case ChatFormat::BitNet: return "bitnet";
    case ChatFormat::Llama3: return "llama3";
    case ChatFormat::ChatML: return "chatml";
    case ChatFormat::Falcon3: return "falcon3";
    case ChatFormat::Gemma: return "gemma";
    case ChatFormat::Plain: return "plain";
  }
  return "?";
}

ChatFormat detect_chat_format(Architecture arch, std::string_view chat_template, const Vocab& vocab) {
  if (arch == Architecture::BitNetB158) return ChatFormat::BitNet;
  const auto has = [&](std::string_view mark) { return chat_template.find(mark) != std::string_view::npos; };
  // The marks llama.cpp's template detection uses for these formats.
  if (has("<|im_start|>")) return ChatFormat::ChatML;
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return ChatFormat::Llama3;
  if (has("<|assistant|>") && has("<|user|>") && has("</s>")) return ChatFormat::Falcon3;
  if (has("<start_of_turn>")) return ChatFormat::Gemma;
  if (find_token_by_names(vocab, {"<|start_header_id|>"}) >= 0 && find_token_by_names(vocab, {"<|eot_id|>"}) >= 0)
    return ChatFormat::Llama3;
  return ChatFormat::Plain;
}

ChatFormat detect_chat_format(const Model& model, const Vocab& vocab) {
  std::string_view chat_template;
  if (const GgufFile* f = model.gguf(); f != nullptr)
    if (const GgufValue* v = f->find("tokenizer.chat_template"); v != nullptr && v->type == GgufValueType::STRING)
      chat_template = v->str;
  return detect_chat_format(model.config().arch, chat_template, vocab);
}

std::string render_chat(ChatFormat format, const std::vector<ChatMessage>& messages) {
  std::string text;
  switch (format) {
    case ChatFormat::BitNet:
      for (const ChatMessage& m : messages) {
        std::string role = m.role;
        if (!role.empty()) role[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(role[0])));
        text += role + ": " + m.content + "<|eot_id|>";
      }
      return text + "Assistant: ";
    case ChatFormat::Llama3:
      for (const ChatMessage& m : messages)
        text += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
      return text + "<|start_header_id|>assistant<|end_header_id|>\n\n";
    case ChatFormat::ChatML:
      for (const ChatMessage& m : messages) text += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      return text + "<|im_start|>assistant\n";
    case ChatFormat::Falcon3:
      for (const ChatMessage& m : messages) text += "<|" + m.role + "|>\n" + m.content + "\n";
      return text + "<|assistant|>\n";
    case ChatFormat::Gemma: {
      std::string system;
      for (const ChatMessage& m : messages) {
        if (m.role == "system") {
          system += m.content;
          continue;
        }
        const bool model_turn = m.role == "assistant";
        text += std::string("<start_of_turn>") + (model_turn ? "model" : m.role) + "\n";
        if (!model_turn && !system.empty()) text += system + "\n\n", system.clear();
        text += m.content + "<end_of_turn>\n";
      }
      return text + "<start_of_turn>model\n";
    }
    case ChatFormat::Plain:
      break;
  }
  for (const ChatMessage& m : messages) text += m.role + ": " + m.content + "\n";
  return text + "assistant:";
}

}  // namespace lowbit
