// The read probe's loop (the roofline every benchmark reports against) must
// load every byte it claims to: a byte it skipped would make the bandwidth
// look higher than memory gives.
#include <gtest/gtest.h>

#include <vector>

#include "core/aligned_buffer.h"
#include "core/cpu_features.h"
#include "kernels/read_bandwidth.h"

namespace lowbit::test {
namespace {

using ReadSum = uint64_t (*)(const uint8_t*, size_t);

// Flipping any byte of the first floor(bytes / 128) * 128 changes the value.
void expect_reads_every_byte(ReadSum read, const char* name) {
  for (const size_t bytes : {size_t{128}, size_t{384}, size_t{512}, size_t{1000}, size_t{4096 + 3 * 128 + 17}}) {
    AlignedBuffer<uint8_t> buf(bytes);
    for (size_t i = 0; i < bytes; ++i) buf[i] = static_cast<uint8_t>(i * 131 + 7);
    const uint64_t base = read(buf.data(), bytes);
    for (size_t i = 0; i < bytes / 128 * 128; ++i) {
      buf[i] ^= 0x10;
      EXPECT_NE(read(buf.data(), bytes), base) << name << ": byte " << i << " of " << bytes << " not read";
      buf[i] ^= 0x10;
    }
  }
}

TEST(ReadProbe, LoadsEveryByteAtEveryIsa) {
#if LOWBIT_X86_KERNELS
  const CpuFeatures& cpu = cpu_features();
  ASSERT_TRUE(cpu.has_avx2_level()) << "this CPU has no AVX2: the probe's ISA paths cannot run";
  expect_reads_every_byte(read_sum_avx2, "avx2");
  if (cpu.has_avx512_level()) expect_reads_every_byte(read_sum_avx512, "avx512");
#endif
  expect_reads_every_byte(read_every_byte, "read_every_byte");
}

}  // namespace
}  // namespace lowbit::test
