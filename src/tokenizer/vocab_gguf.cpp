#include "tokenizer/vocab_gguf.h"

#include "core/error.h"
#include "tokenizer/pre_tokenizer.h"

namespace lowbit {
namespace {

// Names llama.cpp also looks for when a file does not say which token ends a turn.
const std::vector<std::string> kEotNames = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<EOT>"};

int32_t read_token_id(const GgufFile& file, const char* key, int32_t fallback, size_t n_tokens) {
  const std::optional<uint64_t> id = file.get_uint_opt(key);
  if (!id) return fallback < static_cast<int64_t>(n_tokens) ? fallback : -1;
  if (*id >= n_tokens) fail(file.path(), ": ", key, " = ", *id, " is outside the vocabulary of ", n_tokens, " tokens");
  return static_cast<int32_t>(*id);
}

}  // namespace

Vocab read_vocab_gguf(const GgufFile& file) {
  const std::string& path = file.path();
  Vocab vocab;
  vocab.source = path;
  const std::optional<std::string_view> model = file.get_string_opt("tokenizer.ggml.model");
  if (!model) fail(path, ": tokenizer.ggml.model is missing: the file has no vocabulary");
  if (*model == "llama") {
    vocab.kind = Vocab::Kind::Spm;
  } else if (*model == "gpt2") {
    vocab.kind = Vocab::Kind::Bpe;
  } else {
    fail(path, ": tokenizer.ggml.model \"", *model, "\" is not supported (llama, gpt2)");
  }
  const bool spm = vocab.kind == Vocab::Kind::Spm;

  if (!file.has("tokenizer.ggml.tokens")) fail(path, ": tokenizer.ggml.tokens is missing");
  for (std::string_view token : file.get_string_array("tokenizer.ggml.tokens")) vocab.tokens.emplace_back(token);
  const size_t n = vocab.tokens.size();
  if (n == 0) fail(path, ": tokenizer.ggml.tokens is empty");

  if (file.has("tokenizer.ggml.scores")) {
    vocab.scores = file.get_float_array("tokenizer.ggml.scores");
    if (vocab.scores.size() != n)
      fail(path, ": tokenizer.ggml.scores has ", vocab.scores.size(), " entries for ", n, " tokens");
  } else if (spm) {
    vocab.scores.assign(n, 0.0f);  // llama.cpp's default: every merge scores the same
  }

  if (file.has("tokenizer.ggml.token_type")) {
    const std::vector<int64_t> types = file.get_int_array("tokenizer.ggml.token_type");
    if (types.size() != n) fail(path, ": tokenizer.ggml.token_type has ", types.size(), " entries for ", n, " tokens");
    for (size_t i = 0; i < n; ++i) {
      if (types[i] < 0 || types[i] > kTokenByte)
        fail(path, ": tokenizer.ggml.token_type[", i, "] = ", types[i], " is not a token type (0..6)");
      vocab.token_types.push_back(static_cast<int32_t>(types[i]));
    }
  } else {
    vocab.token_types.assign(n, kTokenNormal);
  }

  // Files from before tokenizer.ggml.pre existed get llama.cpp's "default". An
  // unknown name is an error rather than a guess: the wrong split gives other
  // token ids and quietly worse output.
  const PreTokenizerSpec* spec = nullptr;
  vocab.pre = std::string(file.get_string_opt("tokenizer.ggml.pre").value_or("default"));
  if (!spm) {
    if (!file.has("tokenizer.ggml.merges"))
      fail(path, ": tokenizer.ggml.merges is missing (a gpt2 BPE vocabulary needs it)");
    for (std::string_view merge : file.get_string_array("tokenizer.ggml.merges")) vocab.merges.emplace_back(merge);
    spec = find_pre_tokenizer(vocab.pre);
    if (spec == nullptr)
      fail(path, ": tokenizer.ggml.pre \"", vocab.pre,
           "\" is not a known BPE pre-tokenizer (known: ", known_pre_tokenizer_names(), ")");
  }

  // llama.cpp's defaults when a key is absent: Llama 2's ids for "llama", none for "gpt2".
  vocab.bos = read_token_id(file, "tokenizer.ggml.bos_token_id", spm ? 1 : -1, n);
  vocab.eos = read_token_id(file, "tokenizer.ggml.eos_token_id", spm ? 2 : -1, n);
  vocab.unk = read_token_id(file, "tokenizer.ggml.unknown_token_id", spm ? 0 : -1, n);
  vocab.pad = read_token_id(file, "tokenizer.ggml.padding_token_id", -1, n);
  vocab.eot = read_token_id(file, "tokenizer.ggml.eot_token_id", -1, n);
  if (vocab.eot < 0) vocab.eot = find_token_by_names(vocab, kEotNames);

  vocab.add_bos = file.get_bool_opt("tokenizer.ggml.add_bos_token").value_or(spm || spec->add_bos);
  vocab.add_space_prefix = file.get_bool_opt("tokenizer.ggml.add_space_prefix").value_or(spm);
  validate_vocab(vocab, path);
  return vocab;
}

void write_vocab_gguf(const Vocab& vocab, GgufWriter& writer) {
  validate_vocab(vocab, "write_vocab_gguf");
  const bool spm = vocab.kind == Vocab::Kind::Spm;
  writer.set_string("tokenizer.ggml.model", spm ? "llama" : "gpt2");
  writer.set_string("tokenizer.ggml.pre", vocab.pre);
  writer.set_string_array("tokenizer.ggml.tokens", vocab.tokens);
  if (!vocab.scores.empty()) writer.set_f32_array("tokenizer.ggml.scores", vocab.scores);
  writer.set_i32_array("tokenizer.ggml.token_type", vocab.token_types);
  if (!spm) writer.set_string_array("tokenizer.ggml.merges", vocab.merges);
  const std::pair<const char*, int32_t> ids[] = {{"tokenizer.ggml.bos_token_id", vocab.bos},
                                                 {"tokenizer.ggml.eos_token_id", vocab.eos},
                                                 {"tokenizer.ggml.eot_token_id", vocab.eot},
                                                 {"tokenizer.ggml.unknown_token_id", vocab.unk},
                                                 {"tokenizer.ggml.padding_token_id", vocab.pad}};
  for (const auto& [key, id] : ids) {
    if (id >= 0) writer.set_u32(key, static_cast<uint32_t>(id));
  }
  writer.set_bool("tokenizer.ggml.add_bos_token", vocab.add_bos);
  if (spm) writer.set_bool("tokenizer.ggml.add_space_prefix", vocab.add_space_prefix);
}

}  // namespace lowbit
