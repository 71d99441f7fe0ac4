#include "tokenizer/tokenizer.h"

#include "core/error.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/spm_tokenizer.h"

namespace lowbit {

std::unique_ptr<Tokenizer> Tokenizer::create(Vocab vocab) {
  validate_vocab(vocab, vocab.source);
  if (vocab.kind == Vocab::Kind::Spm) return std::make_unique<SpmTokenizer>(std::move(vocab));
  return std::make_unique<BpeTokenizer>(std::move(vocab));
}

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)), specials_(vocab_) {}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
  bool after_special = true;
  for (const TextFragment& fragment : specials_.split(text, parse_special)) {
    if (fragment.token >= 0) {
      out.push_back(fragment.token);
      after_special = true;
    } else {
      encode_text(fragment.text, after_special, out);
      after_special = false;
    }
  }
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id) const {
  if (id < 0 || id >= n_vocab()) fail("token id ", id, " is outside the vocabulary of ", n_vocab(), " tokens");
  return piece_of(id);
}

}  // namespace lowbit
