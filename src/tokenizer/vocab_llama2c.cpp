#include "tokenizer/vocab_llama2c.h"

#include <cstring>

#include "core/error.h"
#include "core/mapped_file.h"
#include "tokenizer/utf8.h"

namespace lowbit {
namespace {

// llama2.c's fixed ids.
constexpr int32_t kUnk = 0, kBos = 1, kEos = 2, kFirstByte = 3;

template <class T>
T read_scalar(const uint8_t* data, size_t offset) {
  T value;
  std::memcpy(&value, data + offset, sizeof(T));
  return value;
}

// The text a GGUF of the same SentencePiece model holds for this piece.
std::string gguf_piece(int32_t id, std::string_view piece) {
  if (id == kBos && piece == "\n<s>\n") return "<s>";
  if (id == kEos && piece == "\n</s>\n") return "</s>";
  std::string out;
  out.reserve(piece.size() + 8);
  for (char c : piece) {
    if (c == ' ')
      out += kSpmSpace;
    else
      out += c;
  }
  return out;
}

int32_t token_type(int32_t id, std::string_view piece) {
  if (id == kUnk) return kTokenUnknown;
  if (id == kBos || id == kEos) return kTokenControl;
  const bool byte_form = piece.size() == 6 && piece.substr(0, 3) == "<0x" && piece[5] == '>';
  if (id >= kFirstByte && id < kFirstByte + 256 && byte_form) return kTokenByte;
  return kTokenNormal;
}

}  // namespace

Vocab read_vocab_llama2c(const std::string& path, int32_t n_vocab) {
  if (n_vocab <= kEos) fail(path, ": a vocabulary of ", n_vocab, " tokens is too small (llama2.c fixes ids 0-2)");
  const MappedFile file(path);
  const uint8_t* data = file.data();
  const size_t size = file.size();
  if (size < 4) fail(path, ": truncated: ", size, " bytes, no max_token_length header");
  const auto max_token_length = read_scalar<int32_t>(data, 0);
  if (max_token_length <= 0) fail(path, ": max_token_length ", max_token_length, " is not positive");

  Vocab vocab;
  vocab.kind = Vocab::Kind::Spm;
  vocab.source = path;
  size_t offset = 4;
  for (int32_t id = 0; id < n_vocab; ++id) {
    if (size - offset < 8)
      fail(path, ": truncated in token ", id, " of ", n_vocab, " (offset ", offset, " of ", size, " bytes)");
    const auto score = read_scalar<float>(data, offset);
    const auto length = read_scalar<int32_t>(data, offset + 4);
    offset += 8;
    if (length < 0 || static_cast<size_t>(length) > size - offset)
      fail(path, ": token ", id, " of ", n_vocab, " has length ", length, " but ", size - offset, " bytes are left");
    const std::string_view piece(reinterpret_cast<const char*>(data + offset), static_cast<size_t>(length));
    offset += static_cast<size_t>(length);
    vocab.tokens.push_back(gguf_piece(id, piece));
    vocab.scores.push_back(score);
    vocab.token_types.push_back(token_type(id, piece));
  }
  if (offset != size)
    fail(path, ": ", size - offset, " bytes follow the ", n_vocab,
         " tokens: the file holds a larger vocabulary than the model's");
  vocab.unk = kUnk;
  vocab.bos = kBos;
  vocab.eos = kEos;
  vocab.add_bos = true;
  vocab.add_space_prefix = true;
  validate_vocab(vocab, path);
  return vocab;
}

}  // namespace lowbit
