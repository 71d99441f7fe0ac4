#include "core/aligned_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

namespace lowbit {
namespace {

bool all_zero(const AlignedBuffer<uint8_t>& b) {
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i] != 0) return false;
  return true;
}

TEST(AlignedBuffer, SmallAndLargeBuffersAreAlignedAndZero) {
  const size_t before = huge_page_mappings();
  {
    AlignedBuffer<uint8_t> small(1000), medium(200 << 10), large(5 << 20);
    for (const auto* b : {&small, &medium, &large}) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 64, 0u);
      EXPECT_TRUE(all_zero(*b));
    }
    EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % (2 << 20), 0u) << "large buffers start on a huge page";
    EXPECT_EQ(huge_page_mappings(), before + 1) << "only the 5 MiB buffer has its own mapping";
  }
  EXPECT_EQ(huge_page_mappings(), before);
}

TEST(AlignedBuffer, ScopePacksBuffersBackToBackOnHugePages) {
  const size_t before = huge_page_mappings();
  AlignedBuffer<uint8_t> a, b, c, after_scope;
  {
    HugePageScope scope;
    a = AlignedBuffer<uint8_t>(100 << 10);
    b = AlignedBuffer<uint8_t>((300 << 10) + 5);
    c = AlignedBuffer<uint8_t>(100);  // under 64 KiB: the usual allocator
    AlignedBuffer<uint8_t> temporary(1 << 20);
    EXPECT_EQ(temporary.data(), b.data() + (300 << 10) + 64);
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % (2 << 20), 0u) << "a chunk starts on a huge page";
  EXPECT_EQ(b.data(), a.data() + (100 << 10)) << "the next buffer follows at once";
  EXPECT_TRUE(all_zero(a) && all_zero(b));
  EXPECT_EQ(huge_page_mappings(), before + 1);
  // After the scope, buffers come from the usual places again.
  after_scope = AlignedBuffer<uint8_t>(100 << 10);
  EXPECT_TRUE(after_scope.data() < a.data() || after_scope.data() >= a.data() + (32 << 20));
  a = {};
  EXPECT_EQ(huge_page_mappings(), before + 1) << "b still lives in the chunk";
  b = {};
  EXPECT_EQ(huge_page_mappings(), before) << "the chunk goes with its last buffer";
}

TEST(AlignedBuffer, ScopesArePerThread) {
  HugePageScope scope;
  AlignedBuffer<uint8_t> mine(100 << 10), theirs;
  std::thread([&] { theirs = AlignedBuffer<uint8_t>(100 << 10); }).join();
  EXPECT_NE(theirs.data(), mine.data() + (100 << 10)) << "another thread's buffer is not carved from this scope's chunk";
}

}  // namespace
}  // namespace lowbit
