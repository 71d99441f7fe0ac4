#include "core/aligned_buffer.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace lowbit {

namespace {
constexpr size_t kHugeThreshold = size_t{4} << 20;  // mmap + THP from 4 MiB up
}

void* aligned_alloc_bytes(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (bytes >= kHugeThreshold) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fail("out of memory: cannot allocate ", bytes, " bytes");
    ::madvise(p, bytes, MADV_HUGEPAGE);
    return p;
  }
  const size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) fail("out of memory: cannot allocate ", bytes, " bytes");
  std::memset(p, 0, rounded);
  return p;
}

void aligned_free_bytes(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes >= kHugeThreshold) {
    ::munmap(p, bytes);
  } else {
    std::free(p);
  }
}

}  // namespace lowbit
