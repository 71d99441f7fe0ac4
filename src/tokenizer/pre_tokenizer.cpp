#include "tokenizer/pre_tokenizer.h"

#include "core/error.h"

namespace lowbit {
namespace {

// GPT-2's split: contractions, letters, numbers, other symbols, each with an
// optional leading space, then whitespace not followed by a word.
constexpr const char* kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";

// Llama 3's split as tokenizer.json writes it, and as we run it: llama.cpp
// spells the case-insensitive contractions out in ASCII, since (?i:) under
// Unicode case folding would also take "'ſ" (long s) and the Kelvin sign.
constexpr const char* kLlama3HfRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const std::vector<PreTokenizerSpec>& table() {
  static const std::vector<PreTokenizerSpec> specs = {
      // llama.cpp's fallback for gpt2-model files that name no pre-tokenizer.
      {{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2Regex, R"(\p{N}+)", "[0-9][0-9][0-9]"}, "", false, false},
      {{"gpt-2"}, {kGpt2Regex}, std::string(kGpt2Regex) + R"(|\s+)", false, false},
      {{"llama-bpe", "llama3", "llama-v3", "falcon3", "falcon-h1", "pixtral"},
       {kLlama3Regex},
       kLlama3HfRegex,
       true,
       true},
  };
  return specs;
}

}  // namespace

const PreTokenizerSpec* find_pre_tokenizer(std::string_view pre) {
  for (const PreTokenizerSpec& spec : table()) {
    for (const std::string& name : spec.names) {
      if (name == pre) return &spec;
    }
  }
  return nullptr;
}

std::string known_pre_tokenizer_names() {
  std::string out;
  for (const PreTokenizerSpec& spec : table()) {
    for (const std::string& name : spec.names) out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

const PreTokenizerSpec* find_pre_tokenizer_by_hf_regex(std::string_view regex) {
  for (const PreTokenizerSpec& spec : table()) {
    if (!spec.hf_regex.empty() && spec.hf_regex == regex) return &spec;
  }
  return nullptr;
}

PreTokenizer::PreTokenizer(const PreTokenizerSpec& spec) {
  for (const std::string& regex : spec.regexes) splitters_.emplace_back(regex);
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces{text};
  std::vector<std::string_view> next;
  for (const RegexSplitter& splitter : splitters_) {
    next.clear();
    splitter.split(pieces, next);
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace lowbit
