// The Matmul of the up-convert-and-compute families (int2, int1, q4_0, q8_0): one
// Vnni4Layout plus the ISA kernel that multiplies a row block by one token.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "core/cpu_features.h"
#include "kernels/matmul.h"
#include "kernels/vnni4_layout.h"

namespace lowbit {

using Vnni4Kernel = void (*)(const Vnni4Task&);
// Several row blocks at once (tasks[0..count)), each one's out bitwise what
// the Vnni4Kernel gives it: a GEMV that keeps more reads in flight.
struct Vnni4Streams {
  void (*kernel)(const Vnni4Task* tasks) = nullptr;
  int count = 0;  // 2..kVnni4MaxStreams
};
inline constexpr int kVnni4MaxStreams = 4;
inline constexpr int kVnni4MaxTokens = 4;

struct Vnni4Spec {
  std::string name;         // "int2/avx512"
  Vnni4Kernel kernel;
  int32_t xsum_factor;      // see vnni4_layout.h
  std::array<uint8_t, 32> lut{};  // int2's nibble tables
  float tensor_scale = 1.0f;      // the reference's per-tensor factor (I2_S)
  // One token: the row blocks of a call are split into `count` parts read
  // side by side (streams.kernel), where set.
  Vnni4Streams streams;
  // One token: two row blocks far apart (Matmul::forward_pair), where set.
  void (*pair)(const Vnni4Task* tasks) = nullptr;
  // Several tokens: one row block times tasks[0..count) (2..kVnni4MaxTokens
  // tokens), each out bitwise what `kernel` gives it, where set.
  void (*tokens)(const Vnni4Task* tasks, int count) = nullptr;
  // Per-token tables the kernels read (Vnni4Task::tables), where set: built
  // once per call before the region (int1_lut). With several tokens the
  // matmul then goes token group by token group, each group's tables hot in
  // cache while every row block of the range passes them.
  ActivationBatch::TableKind tables{nullptr, nullptr};
};

std::unique_ptr<Matmul> make_vnni4_matmul(Vnni4Layout layout, Vnni4Spec spec);

}  // namespace lowbit

namespace lowbit {

// The ISA level a family runs at on a CPU (x86: best last; NeonDot: 64-bit Arm
// with sdot, the arm_neon folder's level).
enum class Vnni4Isa { None, Avx2, AvxVnni, Avx512Vnni, NeonDot };
Vnni4Isa vnni4_isa(const CpuFeatures& cpu);
const char* vnni4_isa_name(Vnni4Isa isa);  // "avx512-vnni", "avx-vnni", "avx2", "neon-dotprod"
// An x86 level: int1_lut, whose kernel is AVX2 code alone, runs there only.
inline bool vnni4_isa_x86(Vnni4Isa isa) { return isa != Vnni4Isa::None && isa != Vnni4Isa::NeonDot; }
// The kernel for a layout at an ISA level; nullptr where there is none
// (Four: the linear int4 kernel, q4_0's, plain AVX2 at every x86 level;
// OneLookup: int1_lut's plain-AVX2 kernel at every x86 level, none on NeonDot).
// nta_prefetch: the AVX-512 kernels' weight prefetch is prefetchnta (AMD:
// CpuFeatures::vendor_amd), else prefetcht0 (the _t0 kernels).
Vnni4Kernel vnni4_kernel(Vnni4Bits bits, Vnni4Isa isa, bool nta_prefetch);

// The ISA kernels (x86_avx512/vnni4_gemv_avx512.cpp, x86_avx2/vnni4_gemv_avx2.cpp).
// The AVX-512 kernels prefetch with prefetchnta; their _t0 twins with prefetcht0.
void int2_gemv_avx512(const Vnni4Task& t);
void int2_gemv_avx512_t0(const Vnni4Task& t);
// Levels lowest + code (u = code: Q2_0, ternary): the codes are masked in place
// instead of looked up, as in the i2s kernel. Groups of at most kInt2LinearMaxGroup k.
void int2_linear_gemv_avx512(const Vnni4Task& t);
void int2_linear_gemv_avx512_t0(const Vnni4Task& t);
inline constexpr int64_t kInt2LinearMaxGroup = int64_t{1} << 18;
void int2_gemv_avx_vnni(const Vnni4Task& t);
void int2_gemv_avx2(const Vnni4Task& t);
// Plain AVX2, levels spanning at most kInt2Int16MaxSpan (vnni4_layout.h):
// int16 sums over up to kInt2Int16Steps steps before each vpmaddwd.
void int2_gemv_avx2_int16(const Vnni4Task& t);
// The same for 2..kVnni4MaxTokens tokens of one row block (Vnni4Spec::tokens):
// each step's codes looked up once for all of them.
void int2_tokens_avx2_int16(const Vnni4Task* tasks, int count);
void int1_gemv_avx512(const Vnni4Task& t);
void int1_gemv_avx512_t0(const Vnni4Task& t);
void int1_tokens_avx512(const Vnni4Task* tasks, int count);  // 2..kVnni4MaxTokens tokens, planes cut once for them
void int1_gemv_avx_vnni(const Vnni4Task& t);
void int1_gemv_avx2(const Vnni4Task& t);
void int1_tokens_avx2(const Vnni4Task* tasks, int count);  // 2..kVnni4MaxTokens tokens, bits expanded once for them
// 4-bit codes as u (Q4_0: nibble, xsum factor -8), plain AVX2 with int16
// sums; the only int4 kernel so far, run at every ISA level (VNNI variants
// would need a machine with them to test on).
void int4_linear_gemv_avx2(const Vnni4Task& t);
// The same for 2..kVnni4MaxTokens tokens of one row block (Vnni4Spec::tokens):
// each step's nibbles unpacked once for all of them.
void int4_linear_tokens_avx2(const Vnni4Task* tasks, int count);
// 4-bit indices into 16 signed int8 values in Vnni4Task::lut (IQ4_NL's
// codebook, xsum factor 0), plain AVX2 at every ISA level too.
void int4_lut_gemv_avx2(const Vnni4Task& t);
void int4_lut_tokens_avx2(const Vnni4Task* tasks, int count);  // 2..kVnni4MaxTokens tokens, as int4_linear_tokens_avx2
void q8_0_gemv_avx512(const Vnni4Task& t);
void q8_0_gemv_avx512_t0(const Vnni4Task& t);
void q8_0_tokens_avx512(const Vnni4Task* tasks, int count);  // 2..kVnni4MaxTokens tokens, each step loaded once for them
void q8_0_gemv_avx_vnni(const Vnni4Task& t);
void q8_0_tokens_avx_vnni(const Vnni4Task* tasks, int count);  // 2..kVnni4MaxTokens tokens, as q8_0_tokens_avx512
// Plain AVX2: u = w + 128 overflows vpmaddubsw's int16 pairs, so this one
// widens u to int16 and multiplies with vpmaddwd.
void q8_0_gemv_avx2(const Vnni4Task& t);
// Three row blocks at once (Vnni4Streams), prefetching non-temporally.
void q8_0_gemv3_avx512(const Vnni4Task* t);
// Two row blocks at once (Vnni4Spec::pair; the tasks may be of two matrices
// with the same layout parameters, lut and xsum_factor).
void int2_gemv2_avx512(const Vnni4Task* t);
void int2_linear_gemv2_avx512(const Vnni4Task* t);
void int2_gemv2_avx512_t0(const Vnni4Task* t);  // prefetcht0 (Intel), as the one-block _t0 kernels
void int2_linear_gemv2_avx512_t0(const Vnni4Task* t);
void int1_gemv2_avx512(const Vnni4Task* t);
void int1_gemv2_avx512_t0(const Vnni4Task* t);

// The NEON kernels (arm_neon/vnni4_gemv_neon.cpp, four_bit_gemv_neon.cpp;
// ARMv8.2-A sdot), for any xsum factor and lut (int2: levels spanning up to
// 255; int4 lookup: any 16 int8 values). Each has a one-token kernel and a
// several-token one (Vnni4Spec::tokens, 2..kVnni4MaxTokens tokens), whose
// results are the one-token kernel's bits.
void q8_0_gemv_neon(const Vnni4Task& t);
void q8_0_tokens_neon(const Vnni4Task* tasks, int count);
void int2_gemv_neon(const Vnni4Task& t);
void int2_tokens_neon(const Vnni4Task* tasks, int count);
void int1_gemv_neon(const Vnni4Task& t);
void int1_tokens_neon(const Vnni4Task* tasks, int count);
void int4_linear_gemv_neon(const Vnni4Task& t);  // Q4_0: nibble as u, xsum factor -8
void int4_linear_tokens_neon(const Vnni4Task* tasks, int count);
void int4_lut_gemv_neon(const Vnni4Task& t);  // IQ4_NL: nibble -> Vnni4Task::lut[nibble], xsum factor 0
void int4_lut_tokens_neon(const Vnni4Task* tasks, int count);

}  // namespace lowbit
