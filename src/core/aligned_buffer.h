// Memory the engine owns: 64-byte aligned (cache line, one zmm register),
// transparent huge pages requested for large buffers (design.md rule 3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace lowbit {

void* aligned_alloc_bytes(size_t bytes);  // throws Error on failure, zero-filled
void aligned_free_bytes(void* p, size_t bytes);

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
