// "q4_0": Q4_0 weights (llama.cpp's 4-bit blocks of 32, element = d * (nibble
// - 8)) row-interleaved 16 at a time in the VNNI4 order, two k per byte
// (vnni4_layout.h, 4-bit). The nibble is the unsigned operand as stored and
// I = D - 8 S restores nibble - 8, so the dot is the reference's, bit for bit.
// 4.5 bits per weight, like the file: GEMV reads what llama.cpp reads.
#include "core/error.h"
#include "kernels/aipc_families.h"
#include "kernels/vnni4_matmul.h"
#include "quant/block_rows.h"
#include "quant/iq4_nl.h"
#include "quant/q4_0.h"

namespace lowbit {

// Q4_0's block (IQ4_NL has the same): fp16 d, then byte j holds element j's
// nibble low and element j + 16's high.
Vnni4Layout pack_nibble_blocks(const WeightView& w, ThreadPool& pool) {
  static_assert(sizeof(BlockQ4_0) == sizeof(BlockIq4Nl) && kQ4_0BlockSize == kIq4NlBlockSize);
  const int64_t row_bytes = ggml_row_bytes(w.type, w.cols);
  constexpr int64_t kHalf = kQ4_0BlockSize / 2;
  return pack_vnni4(
      Vnni4Bits::Four, w.rows, w.cols, kQ4_0BlockSize,
      [&](int64_t r, uint8_t* u, uint16_t* scales) {
        for (int64_t g = 0; g < w.cols / kQ4_0BlockSize; ++g) {
          const auto b = load_block<BlockQ4_0>(w.data + r * row_bytes, g);
          scales[g] = b.d;
          for (int64_t j = 0; j < kHalf; ++j) {
            u[g * kQ4_0BlockSize + j] = b.qs[j] & 0x0f;
            u[g * kQ4_0BlockSize + j + kHalf] = b.qs[j] >> 4;
          }
        }
      },
      pool);
}

namespace {

int q4_0_score(const WeightView& w, const CpuFeatures& cpu) {
  return w.type == GgmlType::Q4_0 && vnni4_kernel(Vnni4Bits::Four, vnni4_isa(cpu), cpu.vendor_amd) != nullptr ? 20 : 0;
}

std::unique_ptr<Matmul> q4_0_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  const Vnni4Isa isa = vnni4_isa(cpu);
  const Vnni4Kernel kernel = vnni4_kernel(Vnni4Bits::Four, isa, cpu.vendor_amd);
  if (w.type != GgmlType::Q4_0 || kernel == nullptr)
    fail("tensor ", w.name, ": the q4_0 kernel needs Q4_0 weights and AVX2 or NEON dotprod (type ",
         ggml_type_name(w.type), ", cpu: ", cpu.describe(), ")");
  Vnni4Layout layout = pack_nibble_blocks(w, pool);
  // On x86 the kernel is plain AVX2 at every level (vnni4_matmul.h), hence its name.
  Vnni4Spec spec{isa == Vnni4Isa::NeonDot ? "q4_0/neon-dotprod" : "q4_0/avx2", kernel, -8, {}, 1.0f, {}};
#if LOWBIT_X86_KERNELS
  spec.tokens = int4_linear_tokens_avx2;
#endif
#if LOWBIT_NEON_KERNELS
  spec.tokens = int4_linear_tokens_neon;
#endif
  return make_vnni4_matmul(std::move(layout), std::move(spec));
}

}  // namespace

KernelFamily q4_0_kernel_family() {
  return {"q4_0", "Q4_0 16-row interleave, two k per byte, int8 dot with int16 sums (AVX2) or sdot (NEON)", q4_0_score, q4_0_make};
}

}  // namespace lowbit
