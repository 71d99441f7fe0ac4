#include "tokenizer/vocab_hf_json.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/mapped_file.h"
#include "tokenizer/pre_tokenizer.h"

namespace lowbit {
namespace {

using nlohmann::json;

const json& member(const json& object, const char* key, json::value_t type, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) fail(where, ": \"", key, "\" is missing");
  if (it->type() != type) fail(where, ": \"", key, "\" is a JSON ", it->type_name(), ", not the expected type");
  return *it;
}

std::string merge_text(const json& merge, const std::string& path, size_t index) {
  if (merge.is_string()) return merge.get<std::string>();
  if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string())
    return merge[0].get<std::string>() + " " + merge[1].get<std::string>();
  fail(path, ": model.merges[", index, "] is neither \"a b\" nor [\"a\", \"b\"]");
}

// The pre-tokenizer name whose split this tokenizer.json describes.
std::string pre_tokenizer_name(const json& root, const std::string& path) {
  auto it = root.find("pre_tokenizer");
  if (it == root.end() || it->is_null()) fail(path, ": no pre_tokenizer (byte-level BPE needs one)");
  std::vector<const json*> steps;
  if (it->value("type", "") == "Sequence") {
    for (const json& step : member(*it, "pretokenizers", json::value_t::array, path + ": pre_tokenizer"))
      steps.push_back(&step);
  } else {
    steps.push_back(&*it);
  }
  std::string regex;
  bool byte_level = false, byte_level_regex = false;
  for (const json* step : steps) {
    const std::string type = step->value("type", "");
    if (type == "Split" && step->contains("pattern") && (*step)["pattern"].contains("Regex") && regex.empty()) {
      regex = (*step)["pattern"]["Regex"].get<std::string>();
    } else if (type == "ByteLevel") {
      byte_level = true;
      byte_level_regex = step->value("use_regex", true);
    } else {
      fail(path, ": pre_tokenizer step ", step->dump().substr(0, 200), " is not supported");
    }
  }
  if (!byte_level) fail(path, ": the pre_tokenizer has no ByteLevel step: not a byte-level BPE tokenizer");
  if (!regex.empty()) {
    if (byte_level_regex) fail(path, ": the pre_tokenizer splits twice (Split and ByteLevel with use_regex)");
    const PreTokenizerSpec* spec = find_pre_tokenizer_by_hf_regex(regex);
    if (spec == nullptr)
      fail(path, ": pre_tokenizer regex \"", regex, "\" is not one we know (", known_pre_tokenizer_names(), ")");
    return spec->names[0];
  }
  if (!byte_level_regex) fail(path, ": the pre_tokenizer does not split words (ByteLevel use_regex false, no Split)");
  return "gpt-2";
}

Vocab vocab_from_json(const json& root, const std::string& path) {
  if (!root.is_object()) fail(path, ": the top level is not a JSON object");
  const json& model = member(root, "model", json::value_t::object, path);
  const std::string type = model.value("type", "");
  if (type != "BPE") fail(path, ": model.type \"", type, "\" is not supported (BPE only)");

  const json& model_vocab = member(model, "vocab", json::value_t::object, path + ": model");
  static const json kNoAddedTokens = json::array();
  const json& added_tokens =
      root.contains("added_tokens") ? member(root, "added_tokens", json::value_t::array, path) : kNoAddedTokens;

  // id -> text. The ids must be 0..n-1 for the n entries listed; an entry's
  // type stays -1 until it is seen, so gaps are found.
  const size_t n_listed = model_vocab.size() + added_tokens.size();
  std::vector<std::string> tokens(n_listed);
  std::vector<int32_t> types(n_listed, -1);
  size_t n = 0;  // 1 + the largest id seen
  auto put = [&](const json& id_value, const std::string& text, int32_t token_type) {
    if (!id_value.is_number_integer() || id_value.get<int64_t>() < 0 ||
        id_value.get<int64_t>() >= static_cast<int64_t>(n_listed))
      fail(path, ": token \"", text, "\" has id ", id_value.dump(), ", not one of 0..", n_listed - 1, " for the ",
           n_listed, " tokens listed");
    const auto id = static_cast<size_t>(id_value.get<int64_t>());
    if (types[id] >= 0 && tokens[id] != text)
      fail(path, ": id ", id, " is both \"", tokens[id], "\" and \"", text, "\"");
    tokens[id] = text;
    types[id] = token_type;
    n = std::max(n, id + 1);
  };
  for (const auto& [text, id] : model_vocab.items()) put(id, text, kTokenNormal);
  for (const json& added : added_tokens) {
    const std::string& text =
        member(added, "content", json::value_t::string, path + ": added_tokens").get_ref<const std::string&>();
    put(added.value("id", json()), text, added.value("special", false) ? kTokenControl : kTokenUserDefined);
  }
  // An added token may repeat a vocab entry, so fewer ids than entries can be in use.
  tokens.resize(n);
  types.resize(n);
  for (size_t id = 0; id < n; ++id) {
    if (types[id] < 0) fail(path, ": no token has id ", id, " (ids must run from 0 to ", n - 1, ")");
  }

  Vocab vocab;
  vocab.kind = Vocab::Kind::Bpe;
  vocab.source = path;
  vocab.tokens = std::move(tokens);
  vocab.token_types = std::move(types);
  const json& merges = member(model, "merges", json::value_t::array, path + ": model");
  vocab.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) vocab.merges.push_back(merge_text(merges[i], path, i));
  vocab.pre = pre_tokenizer_name(root, path);

  vocab.bos = find_token_by_names(vocab, {"<|begin_of_text|>", "<s>"});
  vocab.eos = find_token_by_names(vocab, {"<|end_of_text|>", "</s>", "<|endoftext|>"});
  vocab.eot = find_token_by_names(vocab, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>"});
  if (model.contains("unk_token") && model["unk_token"].is_string())
    vocab.unk = find_token_by_names(vocab, {model["unk_token"].get<std::string>()});
  vocab.add_bos = vocab.bos >= 0 && find_pre_tokenizer(vocab.pre)->add_bos;
  vocab.add_space_prefix = false;
  validate_vocab(vocab, path);
  return vocab;
}

}  // namespace

Vocab read_vocab_hf_json(const std::string& path) {
  const MappedFile file(path);
  try {
    return vocab_from_json(json::parse(file.data(), file.data() + file.size()), path);
  } catch (const json::exception& e) {  // a field of an unexpected JSON type, or not JSON at all
    fail(path, ": ", e.what());
  }
}

}  // namespace lowbit
