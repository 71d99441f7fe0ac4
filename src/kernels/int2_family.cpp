// "int2": 2-bit codes with any 4 levels, up-converted with vpshufb (the AI-PC
// paper's VNNI4-interleaved kernel; tbl and sdot on NEON). Reads Q2_0 (its own family of files),
// and the ternary TQ2_0 / I2_S (which the i2s family serves better by default).
#include <algorithm>
#include <climits>
#include <vector>

#include "core/error.h"
#include "kernels/aipc_families.h"
#include "kernels/vnni4_matmul.h"
#include "quant/block_rows.h"
#include "quant/i2s.h"
#include "quant/q2_0.h"
#include "quant/tq2_0.h"

namespace lowbit {

namespace {

// Q2_0, TQ2_0 and I2_S all mean value = code - 1.
constexpr std::array<int8_t, 4> kCodeMinusOne = {-1, 0, 1, 2};
constexpr uint16_t kFp16One = 0x3c00;

int int2_score(const WeightView& w, const CpuFeatures& cpu) {
  if (vnni4_kernel(Vnni4Bits::Two, vnni4_isa(cpu), cpu.vendor_amd) == nullptr) return 0;
  switch (w.type) {
    case GgmlType::Q2_0: return 20;
    case GgmlType::TQ2_0:
    case GgmlType::I2_S: return 5;
    default: return 0;
  }
}

std::unique_ptr<Matmul> int2_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  const int64_t row_bytes = ggml_row_bytes(w.type, w.cols);
  switch (w.type) {
    case GgmlType::Q2_0:
      return make_int2_matmul(
          w.rows, w.cols, kQ2_0BlockSize, kCodeMinusOne,
          [&](int64_t r, uint8_t* codes, uint16_t* scales) {
            for (int64_t g = 0; g < w.cols / kQ2_0BlockSize; ++g) {
              const auto b = load_block<BlockQ2_0>(w.data + r * row_bytes, g);
              scales[g] = b.d;
              for (int64_t j = 0; j < kQ2_0BlockSize; ++j)
                codes[g * kQ2_0BlockSize + j] = static_cast<uint8_t>(q2_0_code(b, j));
            }
          },
          cpu, pool);
    case GgmlType::TQ2_0:
      return make_int2_matmul(
          w.rows, w.cols, kTQ2_0BlockSize, kCodeMinusOne,
          [&](int64_t r, uint8_t* codes, uint16_t* scales) {
            int8_t v[kTQ2_0BlockSize];
            for (int64_t g = 0; g < w.cols / kTQ2_0BlockSize; ++g) {
              const auto b = load_block<BlockTQ2_0>(w.data + r * row_bytes, g);
              unpack_tq2_0_block(b, v);
              scales[g] = b.d;
              for (int64_t j = 0; j < kTQ2_0BlockSize; ++j)
                codes[g * kTQ2_0BlockSize + j] = static_cast<uint8_t>(v[j] + 1);
            }
          },
          cpu, pool);
    case GgmlType::I2_S:
      // One group per row with d = 1: the reference's float(integer dot) * (scale / s).
      return make_int2_matmul(
          w.rows, w.cols, w.cols, kCodeMinusOne,
          [&](int64_t r, uint8_t* codes, uint16_t* scales) {
            unpack_i2s_codes(w.data + r * row_bytes, w.cols, codes);
            scales[0] = kFp16One;
          },
          cpu, pool, i2s_tensor_scale(w.data, w.rows * w.cols));
    default:
      fail("tensor ", w.name, ": the int2 kernel does not read type ", ggml_type_name(w.type));
  }
}

}  // namespace

Vnni4Kernel int2_kernel(Vnni4Isa isa, const std::array<int8_t, 4>& levels, int64_t group, bool nta_prefetch,
                        std::string* name) {
  const bool linear = levels[1] == levels[0] + 1 && levels[2] == levels[0] + 2 && levels[3] == levels[0] + 3;
  const bool masking = isa == Vnni4Isa::Avx512Vnni && linear && group <= kInt2LinearMaxGroup;
  const int span = *std::max_element(levels.begin(), levels.end()) - *std::min_element(levels.begin(), levels.end());
  const bool int16 = isa == Vnni4Isa::Avx2 && span <= kInt2Int16MaxSpan;
  if (name != nullptr) *name = cat("int2/", vnni4_isa_name(isa), masking ? "-linear" : int16 ? "-int16" : "");
#if LOWBIT_X86_KERNELS
  if (masking) return nta_prefetch ? int2_linear_gemv_avx512 : int2_linear_gemv_avx512_t0;
  if (int16) return int2_gemv_avx2_int16;
#endif
  return vnni4_kernel(Vnni4Bits::Two, isa, nta_prefetch);
}

std::unique_ptr<Matmul> make_int2_matmul(int64_t rows, int64_t cols, int64_t group,
                                         const std::array<int8_t, 4>& levels, Vnni4RowSource source,
                                         const CpuFeatures& cpu, ThreadPool& pool, float tensor_scale) {
  const Vnni4Isa isa = vnni4_isa(cpu);
  if (vnni4_kernel(Vnni4Bits::Two, isa, cpu.vendor_amd) == nullptr)
    fail("the int2 kernel needs AVX2 or NEON dotprod (cpu: ", cpu.describe(), ")");
  const int lowest = *std::min_element(levels.begin(), levels.end());
  const int span = *std::max_element(levels.begin(), levels.end()) - lowest;
  if (isa == Vnni4Isa::Avx2 && span > 127)
    fail("int2 levels span ", span, " > 127: vpmaddubsw (plain AVX2) would saturate");
  if (static_cast<int64_t>(group) * span * 128 > INT32_MAX)
    fail("int2 groups of ", group, " k with levels spanning ", span, " overflow the int32 accumulators");
  Vnni4Spec spec{"", int2_kernel(isa, levels, group, cpu.vendor_amd, nullptr), lowest, {}, tensor_scale, {}};
  int2_kernel(isa, levels, group, cpu.vendor_amd, &spec.name);
  // Several tokens (prefill, a server's batch) on plain AVX2: the codes of a
  // step looked up once for up to 4 tokens (pp64 of a 2B-4T-shaped Q2_0
  // model: docs/performance.md "Session 19").
#if LOWBIT_X86_KERNELS
  if (spec.kernel == int2_gemv_avx2_int16) spec.tokens = int2_tokens_avx2_int16;
#endif
#if LOWBIT_NEON_KERNELS
  if (spec.kernel == int2_gemv_neon) spec.tokens = int2_tokens_neon;
#endif
  // One token with AVX-512: a region's halves side by side (forward_together).
  // In the roofline's chains at 2 threads int2 went from 53-73% to 54-83% of
  // the read bandwidth on Zen 5 (2560 x 6912: 67% -> 83%; docs/performance.md
  // "Session 11"), from 69-88% to 83-98% on an Intel Xeon ("Session 24").
#if LOWBIT_X86_KERNELS
  if (isa == Vnni4Isa::Avx512Vnni) {
    const bool linear = spec.name.ends_with("-linear");
    if (cpu.vendor_amd) spec.pair = linear ? int2_linear_gemv2_avx512 : int2_gemv2_avx512;
    else spec.pair = linear ? int2_linear_gemv2_avx512_t0 : int2_gemv2_avx512_t0;
  }
#endif
  // vpshufb (NEON: tbl) tables indexed by a nibble: bits 0-1 (first 16 bytes), bits 2-3 (next 16).
  for (int n = 0; n < 16; ++n) {
    spec.lut[n] = static_cast<uint8_t>(levels[n & 3] - lowest);
    spec.lut[16 + n] = static_cast<uint8_t>(levels[n >> 2] - lowest);
  }
  return make_vnni4_matmul(pack_vnni4(Vnni4Bits::Two, rows, cols, group, source, pool), std::move(spec));
}

KernelFamily int2_kernel_family() {
  return {"int2", "2-bit codes, any 4 levels, vpshufb up-convert + int8 VNNI (AI-PC paper; AVX2/AVX-512; NEON sdot)",
          int2_score, int2_make};
}

}  // namespace lowbit
