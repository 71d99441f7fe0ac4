#include "runtime/tokenizer_loader.h"

#include <filesystem>

#include "core/error.h"
#include "formats/gguf.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_hf_json.h"
#include "tokenizer/vocab_llama2c.h"

namespace lowbit {

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, const Model& model) {
  if (path.empty()) {
    if (model.gguf() == nullptr)
      fail(model.path(), ": a llama2.c checkpoint has no vocabulary; pass its tokenizer with -z tokenizer.bin");
    return Tokenizer::create(read_vocab_gguf(*model.gguf()));
  }
  const std::string ext = std::filesystem::path(path).extension().string();
  Vocab vocab;
  if (ext == ".json") {
    vocab = read_vocab_hf_json(path);
  } else if (ext == ".gguf") {
    vocab = read_vocab_gguf(GgufFile(path));
  } else {
    vocab = read_vocab_llama2c(path, static_cast<int32_t>(model.config().n_vocab));
  }
  if (static_cast<int64_t>(vocab.tokens.size()) != model.config().n_vocab)
    fail(path, ": tokenizer has ", vocab.tokens.size(), " tokens but model ", model.path(), " has ",
         model.config().n_vocab);
  return Tokenizer::create(std::move(vocab));
}

}  // namespace lowbit
