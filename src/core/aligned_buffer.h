// Memory the engine owns: 64-byte aligned (cache line, one zmm register),
// transparent huge pages requested for large buffers (design.md rule 3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace lowbit {

void* aligned_alloc_bytes(size_t bytes);  // throws Error on failure, zero-filled
void aligned_free_bytes(void* p, size_t bytes);

// While one is alive on a thread, that thread's buffers of 64 KiB and more are
// carved one after another from 2 MiB-aligned chunks of transparent huge pages.
// Model loading runs in one, so every repacked matrix lies in huge pages: a
// matrix under 2 MiB on its own would get 4 KiB pages, and the TLB misses of
// streaming it cost a GEMV a third of its speed on the machine of
// docs/performance.md. Space is not reused: a chunk is unmapped when the
// scope has ended and its last buffer is freed.
// Mappings held for buffers of 4 MiB and more and for scopes' chunks (tests, diagnostics).
size_t huge_page_mappings();

class HugePageScope {
 public:
  HugePageScope();
  ~HugePageScope();
  HugePageScope(const HugePageScope&) = delete;
  HugePageScope& operator=(const HugePageScope&) = delete;
};

template <class T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t count)
      : data_(static_cast<T*>(aligned_alloc_bytes(count * sizeof(T)))), count_(count) {}
  ~AlignedBuffer() { aligned_free_bytes(data_, count_ * sizeof(T)); }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      aligned_free_bytes(data_, count_ * sizeof(T));
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return count_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace lowbit
