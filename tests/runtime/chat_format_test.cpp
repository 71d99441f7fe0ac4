// Chat formats: which one a model gets (its architecture, the marks of its
// GGUF chat template, its vocabulary), and the exact prompt text of each for
// one conversation, as the models' own templates write it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/chat_format.h"

namespace lowbit {
namespace {

const std::vector<ChatMessage> kTalk = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Why?"}};

Vocab vocab_with(std::vector<std::string> tokens) {
  Vocab v;
  v.tokens = std::move(tokens);
  return v;
}

TEST(ChatFormat, DetectedFromArchitectureTemplateAndVocabulary) {
  const Vocab none;
  const Vocab llama3 = vocab_with({"a", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"});
  // Abridged from the models' tokenizer.chat_template.
  const std::string chatml = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
                             "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}";
  const std::string falcon3 = "{% if message['role'] == 'user' %}{{ '<|user|>\\n' + message['content'] + '\\n' }}"
                              "{% elif message['role'] == 'assistant' %}{{ '<|assistant|>\\n' + message['content'] + "
                              "'</s>' }}{% endif %}";
  const std::string gemma = "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}";
  const std::string l3 = "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}";
  const std::string zephyr = "{{ '<|user|>\\n' + message['content'] + eos_token }}{{ '<|assistant|>\\n' }}";

  EXPECT_EQ(detect_chat_format(Architecture::BitNetB158, chatml, llama3), ChatFormat::BitNet);
  EXPECT_EQ(detect_chat_format(Architecture::Llama, chatml, llama3), ChatFormat::ChatML) << "the template first";
  EXPECT_EQ(detect_chat_format(Architecture::Llama, falcon3, none), ChatFormat::Falcon3);
  EXPECT_EQ(detect_chat_format(Architecture::Llama, gemma, none), ChatFormat::Gemma);
  EXPECT_EQ(detect_chat_format(Architecture::Llama, l3, none), ChatFormat::Llama3);
  EXPECT_EQ(detect_chat_format(Architecture::Llama, "", llama3), ChatFormat::Llama3) << "no template: the vocabulary";
  EXPECT_EQ(detect_chat_format(Architecture::Llama, zephyr, none), ChatFormat::Plain) << "<|user|> without </s>";
  EXPECT_EQ(detect_chat_format(Architecture::Llama, "", none), ChatFormat::Plain);
  EXPECT_STREQ(chat_format_name(ChatFormat::Falcon3), "falcon3");
}

TEST(ChatFormat, EachFormatsPromptText) {
  EXPECT_EQ(render_chat(ChatFormat::BitNet, kTalk),
            "System: Be brief.<|eot_id|>User: Hi<|eot_id|>Assistant: Hello.<|eot_id|>User: Why?<|eot_id|>Assistant: ");
  EXPECT_EQ(render_chat(ChatFormat::Llama3, kTalk),
            "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nWhy?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render_chat(ChatFormat::ChatML, kTalk),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nWhy?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render_chat(ChatFormat::Falcon3, kTalk),
            "<|system|>\nBe brief.\n<|user|>\nHi\n<|assistant|>\nHello.\n<|user|>\nWhy?\n<|assistant|>\n");
  EXPECT_EQ(render_chat(ChatFormat::Gemma, kTalk),
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n"
            "<start_of_turn>user\nWhy?<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(render_chat(ChatFormat::Plain, kTalk),
            "system: Be brief.\nuser: Hi\nassistant: Hello.\nuser: Why?\nassistant:");
}

}  // namespace
}  // namespace lowbit
