// Errors: one exception type that carries a message naming the file, tensor,
// field or limit that was wrong. Tools catch it at the top and exit non-zero.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace lowbit {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Concatenates anything streamable: cat("tensor ", name, ": ", n, " bytes").
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  throw Error(cat(args...));
}

}  // namespace lowbit
