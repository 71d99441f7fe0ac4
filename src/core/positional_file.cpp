#include "core/positional_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace lowbit {

PositionalFile::PositionalFile(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
  if (fd_ < 0) fail(path, ": cannot open: ", std::strerror(errno));
}

PositionalFile::~PositionalFile() {
  if (fd_ >= 0) ::close(fd_);
}

void PositionalFile::read_exact(void* dst, int64_t bytes, int64_t offset) const {
  if (fd_ < 0) fail("read of ", bytes, " bytes from a file that is not open");
  auto* p = static_cast<char*>(dst);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd_, p, static_cast<size_t>(bytes), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      fail(path_, ": cannot read ", bytes, " bytes at offset ", offset, ": ", got < 0 ? std::strerror(errno) : "end of file");
    p += got;
    bytes -= got;
    offset += got;
  }
}

}  // namespace lowbit
