#include "core/aligned_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace lowbit {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeThreshold = size_t{4} << 20;     // own mapping from 4 MiB up
constexpr size_t kPackedThreshold = size_t{64} << 10;  // carved from a chunk from 64 KiB up (in a scope)
constexpr size_t kChunkBytes = size_t{32} << 20;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// A 2 MiB-aligned anonymous mapping, huge pages requested. Zero-filled.
char* map_huge(size_t bytes) {
  void* p = ::mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fail("out of memory: cannot allocate ", bytes, " bytes");
  char* const raw = static_cast<char*>(p);
  char* const base = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(raw), kHugePage));
  if (base > raw) ::munmap(raw, static_cast<size_t>(base - raw));
  ::munmap(base + bytes, static_cast<size_t>(raw + bytes + kHugePage - (base + bytes)));
  ::madvise(base, bytes, MADV_HUGEPAGE);
  return base;
}

// Mappings that hold one or more buffers: unmapped when the last one is freed
// and no more will be carved from it.
struct Chunk {
  char* base;
  size_t size, used;
  int64_t live;  // buffers not yet freed
  bool open;     // still taking buffers (the current chunk of a scope)
};

std::mutex chunks_mutex;
std::vector<Chunk> chunks;  // under chunks_mutex
thread_local int scope_depth = 0;
thread_local char* scope_chunk = nullptr;  // base of this thread's open chunk, if any

std::vector<Chunk>::iterator find_chunk(const char* p) {
  return std::find_if(chunks.begin(), chunks.end(), [&](const Chunk& c) { return p >= c.base && p < c.base + c.size; });
}

void unmap_if_done(std::vector<Chunk>::iterator c) {
  if (c->live > 0 || c->open) return;
  ::munmap(c->base, c->size);
  chunks.erase(c);
}

// Closes this thread's open chunk; it goes once its buffers are freed.
void seal_scope_chunk() {
  if (scope_chunk == nullptr) return;
  const auto c = find_chunk(scope_chunk);
  scope_chunk = nullptr;
  if (c == chunks.end()) return;
  c->open = false;
  unmap_if_done(c);
}

// `bytes` from the open chunk of this thread's scope, or from a new chunk.
char* carve(size_t bytes) {
  std::lock_guard lock(chunks_mutex);
  if (scope_chunk != nullptr) {
    const auto c = find_chunk(scope_chunk);
    if (c != chunks.end() && c->size - c->used >= bytes) {
      char* p = c->base + c->used;
      c->used += bytes;
      ++c->live;
      return p;
    }
    seal_scope_chunk();
  }
  const size_t size = std::max(kChunkBytes, round_up(bytes, kHugePage));
  char* base = map_huge(size);
  chunks.push_back({base, size, bytes, 1, true});
  scope_chunk = base;
  return base;
}

}  // namespace

size_t huge_page_mappings() {
  std::lock_guard lock(chunks_mutex);
  return chunks.size();
}

HugePageScope::HugePageScope() { ++scope_depth; }

HugePageScope::~HugePageScope() {
  if (--scope_depth > 0) return;
  std::lock_guard lock(chunks_mutex);
  seal_scope_chunk();
}

void* aligned_alloc_bytes(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (scope_depth > 0 && bytes >= kPackedThreshold) return carve(round_up(bytes, 64));
  if (bytes >= kHugeThreshold) {
    const size_t size = round_up(bytes, kHugePage);
    char* base = map_huge(size);
    std::lock_guard lock(chunks_mutex);
    chunks.push_back({base, size, bytes, 1, false});
    return base;
  }
  const size_t rounded = round_up(bytes, 64);
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) fail("out of memory: cannot allocate ", bytes, " bytes");
  std::memset(p, 0, rounded);
  return p;
}

void aligned_free_bytes(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes >= kPackedThreshold) {
    std::lock_guard lock(chunks_mutex);
    const auto c = find_chunk(static_cast<char*>(p));
    if (c != chunks.end()) {
      --c->live;
      unmap_if_done(c);
      return;
    }
  }
  std::free(p);
}

}  // namespace lowbit
