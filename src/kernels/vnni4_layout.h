// The row-block layouts of the up-convert-and-compute kernels ("Pushing the
// Envelope of LLM Inference on AI-PC"): 16 output rows side by side, so one
// 512-bit register (or two 256-bit ones) holds one int32 accumulator per row,
// and each row's 32-bit lane receives 4 consecutive k (the VNNI4 order that
// vpdpbusd multiplies against 4 broadcast activations).
//
// Every kernel here computes, per row and per scale group g of `group` k:
//   D_g = sum_k u[k] * x[k]        u = the weight's unsigned operand (0..255)
//   I_g = dot_factor * D_g + xsum_factor * S_g,  S_g = sum of x over the group
//   acc = acc + d_g * float(I_g)   (fp16 d_g, groups in order)
//   y   = acc * inv                (inv = tensor scale / activation scale)
// which is the format's reference dot_i8 exactly: the weights' signed values
// are written as dot_factor * u + xsum_factor (int2: u = level - lowest level;
// int1: 2 * bit - 1; q8_0: (w + 128) - 128), so the unsigned-times-signed
// int8 dot products of VNNI need no signed weight operand.
//
// Memory of one matrix: row blocks one after another (64-byte aligned), each
// its groups in pairs, every pair one stream of codes and then its scales:
//   [codes of g][codes of g+1][16 fp16 scales of g][16 fp16 scales of g+1]
//   codes of a group: [steps per group][step bytes]
// (an odd last group: [codes][its 16 scales][32 bytes of padding]).
// Scales next to their codes, not in a plane after all the codes: a second
// stream per row block 40 KB away held a Q8_0 head's GEMV to 0.64-0.69 of a
// plain read of its bytes; interleaved, 0.88-0.91 (docs/performance.md).
// Step encodings (r = row in block 0..15, j = 0..3, k0 = first k of the step):
//   8-bit (q8_0): 64 bytes, 4 k;  byte 4r+j = u(r, k0+j)
//   2-bit (int2): 64 bytes, 16 k; byte 4r+j bits 2v..2v+1 = code(r, k0+4v+j), v = 0..3
//   4-bit (int4):  64 bytes, 8 k; byte 4r+j low nibble = code(r, k0+j), high = code(r, k0+4+j)
//   1-bit (int1):  64 bytes, 32 k, as 8 bit planes: byte 4r+j bit p = bit(r, k0+4p+j), so
//                  one AND with 1 << p leaves plane p as a VNNI4 vector (u = 0 or 2^p) of
//                  the 4 k that meet x[k0+4p .. k0+4p+3]; groups are a multiple of 32 k
//   1-bit for lookups (int1_lut): 32 bytes, 16 k, as four quads of 4 k, quad q = 2L + n:
//                  byte 16L + r bit 4n + j = bit(r, k0 + 4q + j), so each 128-bit lane's low
//                  (high) nibbles are the 16 rows' 4-bit indices into one quad's table
// Rows past N are zero codes with zero scales.
#pragma once

#include <cstdint>

#include "core/aligned_buffer.h"
#include "core/function_ref.h"
#include "core/thread_pool.h"

namespace lowbit {

constexpr int64_t kVnni4Rows = 16;

// How far ahead of their loads the kernels prefetch. The hardware prefetcher
// alone leaves one core well below the DRAM bandwidth it can draw (measured:
// ~60% for int2 on a Zen 5 core); LOWBIT_PREFETCH_BYTES overrides it for tuning.
#ifndef LOWBIT_PREFETCH_BYTES
#define LOWBIT_PREFETCH_BYTES 4096
#endif
constexpr int64_t kVnni4PrefetchBytes = LOWBIT_PREFETCH_BYTES;

// The plain-AVX2 int4 kernel (u = code, 0..15) adds a step's pair sums in
// int16 for up to 4 steps: 4 steps x 2 x 2 x 15 x 128 = 30720 < 2^15.
constexpr int64_t kInt4Int16Steps = 4;
// The plain-AVX2 int2 kernel with int16 sums: levels spanning at most 7, sums
// of at most 4 steps (4 steps x 4 products x 2 x 7 x 128 = 28672 < 2^15).
constexpr int kInt2Int16MaxSpan = 7;
constexpr int64_t kInt2Int16Steps = 4;
// The AVX-512 int2 kernels (and q8_0's _t0 twin) prefetched twice as far, as non-temporal
// (prefetchnta: the weights are read once per token and should not displace
// what is reused). int2 with its up-convert work between loads streamed 2-7%
// faster 8 KiB ahead than 4 at 2 threads (prefetcht0); q8_0 was slower that
// far with prefetcht0, but with prefetchnta 8 KiB was its best distance: 5-40%
// faster than prefetcht0 at 4 KiB through the Matmul (3 runs, 4 shapes), -7%
// to +19% with the kernel called directly (2 runs), in passes over the same
// copies back to back (see kQ8_0PrefetchBytes below for what replaced it). int1 is compute-bound:
// 4 KiB, either hint (docs/performance.md "Session 7"). All that was Zen 5: on
// an Intel Xeon prefetcht0 was much faster, so the hint follows the vendor
// (the _t0 kernels, vnni4_kernel's nta_prefetch; "Session 8").
// Since int2 reads a region's halves side by side (pairs), 4 KiB is its
// distance again: at 2 threads on Zen 5 it read 640 x 2560 5-9% and 2560 x
// 2560 ~5% faster than 8 KiB, the larger shapes and 1 thread alike
// (`lowbit roofline --chain`, builds alternated 3 times; docs/performance.md
// "Session 41"). A short region's streams are ~100 KB a thread: a far
// prefetch spends more of each on lines past its end and covers less of its start.
constexpr int64_t kInt2PrefetchBytes = kVnni4PrefetchBytes;
// q8_0 (AVX-512, prefetchnta: AMD) prefetches 2 KiB ahead. Measured the way
// decode reads its matrices (each pass over the weights preceded by a read of
// as many other bytes), 2 KiB streamed 10-20% faster than 8 KiB at 1 thread on
// Zen 5 (2 threads: within noise), and in end-to-end runs the Q8_0 output head
// took 22-27% less time per token in one stretch, the same in another
// (docs/performance.md "Session 10"). Session 7's 8 KiB came from passes over
// the same copies back to back, which favour longer distances.
// The _t0 kernels (prefetcht0: Intel) prefetch int2 and q8_0 2 KiB ahead. On
// a 2-core Intel Xeon that took the roofline's chains at 2 threads from 82-84%
// to 90-94% of the read bandwidth for q8_0 and from 69-88% to 76-88% for int2
// against the 8 KiB they had (1 and 4 KiB no better, prefetcht1 no better;
// docs/performance.md "Session 24").
constexpr int64_t kVnni4T0PrefetchBytes = 2048;
#ifndef LOWBIT_Q8_0_PREFETCH_BYTES
#define LOWBIT_Q8_0_PREFETCH_BYTES 2048
#endif
constexpr int64_t kQ8_0PrefetchBytes = LOWBIT_Q8_0_PREFETCH_BYTES;

// OneLookup: the 1-bit values arranged for int1_lut's table lookups.
enum class Vnni4Bits { One = 1, Two = 2, Four = 4, Eight = 8, OneLookup = 16 };

struct Vnni4Layout {
  Vnni4Bits bits = Vnni4Bits::Two;
  int64_t rows = 0;   // N
  int64_t cols = 0;   // K, a multiple of group
  int64_t group = 0;  // k per scale, a multiple of 16 (int1: of 32)
  AlignedBuffer<uint8_t> data;

  int64_t k_per_step() const {
    return bits == Vnni4Bits::One                                   ? 32
           : bits == Vnni4Bits::Two || bits == Vnni4Bits::OneLookup ? 16
           : bits == Vnni4Bits::Four                                ? 8
                                                                    : 4;
  }
  int64_t step_bytes() const { return bits == Vnni4Bits::OneLookup ? 32 : 64; }
  int64_t groups() const { return cols / group; }
  int64_t row_blocks() const { return (rows + kVnni4Rows - 1) / kVnni4Rows; }
  int64_t group_bytes() const { return group / k_per_step() * step_bytes(); }  // codes of one group
  int64_t block_stride() const {
    const int64_t g = groups(), b = group_bytes();
    return ((g / 2) * (2 * b + 64) + (g % 2) * (b + 64) + 63) / 64 * 64;
  }
  const uint8_t* codes(int64_t rb) const { return data.data() + rb * block_stride(); }  // the row block
};

// Offsets inside a row block of group g's codes and of its 16 fp16 scales
// (group_bytes: codes of one group; groups: of the row block).
inline int64_t vnni4_codes_offset(int64_t g, int64_t group_bytes) {
  return (g / 2) * (2 * group_bytes + 64) + (g % 2) * group_bytes;
}
inline int64_t vnni4_scales_offset(int64_t g, int64_t groups, int64_t group_bytes) {
  const int64_t in_pair = groups - (g - g % 2) >= 2 ? 2 : 1;
  return (g / 2) * (2 * group_bytes + 64) + in_pair * group_bytes + 32 * (g % 2);
}

// Fills one row: values[K] (int2: codes 0..3; int1, int1_lut: bits 0/1; int4: codes 0..15; q8_0: u 0..255)
// and scales[groups] (fp16 bits).
using Vnni4RowSource = FunctionRef<void(int64_t row, uint8_t* values, uint16_t* scales)>;

// Builds the layout from rows given by `source`, on the pool. Throws Error when
// K is not a multiple of group or group not a multiple of 16 and of a step's k.
Vnni4Layout pack_vnni4(Vnni4Bits bits, int64_t rows, int64_t cols, int64_t group, Vnni4RowSource source,
                       ThreadPool& pool);

// The inputs of one row block's GEMV for one token (the ISA kernels' argument).
struct Vnni4Task {
  const uint8_t* codes;   // the row block (codes and scales, layout above)
  int64_t group_bytes;    // codes of one group
  int64_t groups;
  int64_t steps_per_group;
  const int8_t* x;        // [K] the token's int8 activations
  const int32_t* xsum;    // [groups] S_g
  int32_t xsum_factor;
  const uint8_t* lut;     // int2: [32] u of the low nibble's bits 0-1 (16 bytes), then of bits 2-3; int4 codebook: [16] int8
  float inv;
  float* out;             // [16] y of the block's rows
  const uint8_t* tables = nullptr;  // int1_lut: the token's lookup tables (int1_lut.h)
};

inline const uint8_t* vnni4_group_codes(const Vnni4Task& t, int64_t g) {
  return t.codes + vnni4_codes_offset(g, t.group_bytes);
}
inline const uint16_t* vnni4_group_scales(const Vnni4Task& t, int64_t g) {
  return reinterpret_cast<const uint16_t*>(t.codes + vnni4_scales_offset(g, t.groups, t.group_bytes));
}

}  // namespace lowbit
