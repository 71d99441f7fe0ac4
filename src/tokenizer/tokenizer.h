// Text <-> token ids. One class per algorithm (spm_tokenizer.h, bpe_tokenizer.h)
// behind this interface; create() picks by Vocab::kind. Encoding follows
// llama.cpp's tokenizers, so ids match what llama.cpp and bitnet.cpp feed the model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/special_tokens.h"
#include "tokenizer/vocab.h"

namespace lowbit {

class Tokenizer {
 public:
  // Validates the vocabulary (Error naming what is wrong) and builds the lookup tables.
  static std::unique_ptr<Tokenizer> create(Vocab vocab);
  virtual ~Tokenizer() = default;

  // add_bos: start with vocab().bos (nothing when the vocabulary has none);
  // pass vocab().add_bos for what the model expects.
  // parse_special: text like "<|eot_id|>" or "<s>" becomes that control token;
  // user-defined tokens are split out either way.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special) const;

  // The bytes this token stands for (SPM: U+2581 -> ' ', <0xAB> -> byte 0xAB;
  // BPE: byte-level decoded). Control, unknown and user-defined tokens give
  // their text ("<s>", "<|eot_id|>"): callers printing model output skip
  // control tokens themselves. Error when id is outside the vocabulary.
  std::string token_to_piece(int32_t id) const;

  const Vocab& vocab() const { return vocab_; }
  int32_t n_vocab() const { return vocab_.n_vocab(); }
  bool is_end_of_generation(int32_t id) const { return id >= 0 && (id == vocab_.eos || id == vocab_.eot); }

 protected:
  explicit Tokenizer(Vocab vocab);
  // Tokens of one run of text with no special tokens in it. `after_special`:
  // the run starts the text or follows a special token (SPM adds its space there).
  virtual void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const = 0;
  // token_to_piece of an id already checked to be in range.
  virtual std::string piece_of(int32_t id) const = 0;

  Vocab vocab_;

 private:
  SpecialTokenSplitter specials_;
};

}  // namespace lowbit
