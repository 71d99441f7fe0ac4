// "int1": +-1 weights with a scale per group (Q1_0), bits expanded to bytes
// and multiplied with int8 VNNI (the AI-PC paper's 1-bit kernel; sdot on NEON).
#include "core/error.h"
#include "kernels/aipc_families.h"
#include "kernels/vnni4_matmul.h"
#include "quant/block_rows.h"
#include "quant/q1_0.h"

namespace lowbit {

namespace {

int int1_score(const WeightView& w, const CpuFeatures& cpu) {
  return w.type == GgmlType::Q1_0 && vnni4_kernel(Vnni4Bits::One, vnni4_isa(cpu), cpu.vendor_amd) != nullptr ? 20 : 0;
}

std::unique_ptr<Matmul> int1_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  const Vnni4Isa isa = vnni4_isa(cpu);
  if (w.type != GgmlType::Q1_0 || vnni4_kernel(Vnni4Bits::One, isa, cpu.vendor_amd) == nullptr)
    fail("tensor ", w.name, ": the int1 kernel needs Q1_0 weights and AVX2 or NEON dotprod (type ", ggml_type_name(w.type),
         ", cpu: ", cpu.describe(), ")");
  Vnni4Layout layout = pack_q1_0(w, Vnni4Bits::One, pool);
  // weight = 2 * bit - 1: I = 2 D - S.
  Vnni4Spec spec{cat("int1/", vnni4_isa_name(isa)), vnni4_kernel(Vnni4Bits::One, isa, cpu.vendor_amd), -1, {}, 1.0f, {}};
  // Several tokens on AVX-512, plain AVX2 and NEON: each line's bit planes cut out once for up to 4 of them.
#if LOWBIT_X86_KERNELS
  if (spec.kernel == int1_gemv_avx2) spec.tokens = int1_tokens_avx2;
  if (isa == Vnni4Isa::Avx512Vnni) {
    spec.tokens = int1_tokens_avx512;
    // One token: a region's halves side by side (forward_together), as int2.
    spec.pair = cpu.vendor_amd ? int1_gemv2_avx512 : int1_gemv2_avx512_t0;
  }
#endif
#if LOWBIT_NEON_KERNELS
  if (spec.kernel == int1_gemv_neon) spec.tokens = int1_tokens_neon;
#endif
  return make_vnni4_matmul(std::move(layout), std::move(spec));
}

}  // namespace

Vnni4Layout pack_q1_0(const WeightView& w, Vnni4Bits bits, ThreadPool& pool) {
  const int64_t row_bytes = ggml_row_bytes(w.type, w.cols);
  return pack_vnni4(
      bits, w.rows, w.cols, kQ1_0BlockSize,
      [&](int64_t r, uint8_t* values, uint16_t* scales) {
        for (int64_t g = 0; g < w.cols / kQ1_0BlockSize; ++g) {
          const auto b = load_block<BlockQ1_0>(w.data + r * row_bytes, g);
          scales[g] = b.d;
          for (int64_t j = 0; j < kQ1_0BlockSize; ++j) values[g * kQ1_0BlockSize + j] = static_cast<uint8_t>(q1_0_bit(b, j));
        }
      },
      pool);
}

KernelFamily int1_kernel_family() {
  return {"int1", "1-bit +-1 weights (Q1_0), bit expand + int8 VNNI (AI-PC paper; AVX2/AVX-512; NEON sdot)", int1_score,
          int1_make};
}

}  // namespace lowbit
