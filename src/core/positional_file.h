// A file read by position (pread), for data read a piece at a time while the
// engine runs: unlike a read through a mapping, the page cache it reads from
// does not count in the process's resident set, and no fault maps in more
// than was asked for (file pages can be mapped 2 MiB at a time).
#pragma once

#include <cstdint>
#include <string>

namespace lowbit {

class PositionalFile {
 public:
  PositionalFile() = default;
  // Throws Error naming the path when it cannot be opened.
  explicit PositionalFile(const std::string& path);
  ~PositionalFile();
  PositionalFile(const PositionalFile&) = delete;
  PositionalFile& operator=(const PositionalFile&) = delete;

  bool is_open() const { return fd_ >= 0; }
  // Reads exactly `bytes` at `offset`; throws Error naming the path otherwise.
  void read_exact(void* dst, int64_t bytes, int64_t offset) const;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace lowbit
