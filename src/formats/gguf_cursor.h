// A bounds-checked little-endian reader over a GGUF image. Every read checks
// the bytes it needs against what remains, and every error names the file and
// the current context ("header", "key 'general.name'", "tensor 'output.weight'").
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/error.h"

namespace lowbit {

static_assert(std::endian::native == std::endian::little, "GGUF is read by memcpy: little-endian hosts only");

class GgufCursor {
 public:
  GgufCursor(const uint8_t* data, size_t size, const std::string& path) : data_(data), size_(size), path_(path) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  const std::string& path() const { return path_; }
  void set_context(std::string context) { context_ = std::move(context); }

  template <class... Args>
  [[noreturn]] void fail_here(const Args&... args) const {
    lowbit::fail(path_, ": ", context_, ": ", args...);
  }

  // `what` names the field in the error when the file ends inside it.
  template <class T>
  T read(const char* what) {
    static_assert(std::is_arithmetic_v<T>);
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  // u64 length + bytes; the view points into the image.
  std::string_view read_string(const char* what) {
    const uint64_t n = read<uint64_t>(what);
    if (n > remaining()) fail_here(what, " of ", n, " bytes does not fit in the file (", remaining(), " bytes remain)");
    const std::string_view s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }

 private:
  void need(size_t n, const char* what) const {
    if (n > remaining())
      fail_here("file ends inside the ", what, " (needs ", n, " bytes at offset ", pos_, ", ", remaining(), " remain)");
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& path_;
  std::string context_ = "header";
};

}  // namespace lowbit
