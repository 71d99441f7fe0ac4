// "q8_0": Q8_0 weights row-interleaved 16 at a time, stored as w + 128 so that
// vpdpbusd (unsigned x signed) multiplies them exactly; I = D - 128 S (plain
// AVX2 widens u to int16 for vpmaddwd, as exact; NEON's signed sdot takes
// u ^ 0x80 = w and gets D - 128 S at once). The int8
// baseline of the AI-PC paper's GEMV figures and a fast path for Q8_0 heads.
#include "core/error.h"
#include "kernels/aipc_families.h"
#include "kernels/vnni4_matmul.h"
#include "quant/block_rows.h"
#include "quant/q8_0.h"

namespace lowbit {

namespace {

int q8_0_score(const WeightView& w, const CpuFeatures& cpu) {
  return w.type == GgmlType::Q8_0 && vnni4_kernel(Vnni4Bits::Eight, vnni4_isa(cpu), cpu.vendor_amd) != nullptr ? 20 : 0;
}

std::unique_ptr<Matmul> q8_0_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  const Vnni4Isa isa = vnni4_isa(cpu);
  if (w.type != GgmlType::Q8_0 || vnni4_kernel(Vnni4Bits::Eight, isa, cpu.vendor_amd) == nullptr)
    fail("tensor ", w.name, ": the q8_0 kernel needs Q8_0 weights and AVX2 or NEON dotprod (type ",
         ggml_type_name(w.type), ", cpu: ", cpu.describe(), ")");
  const int64_t row_bytes = ggml_row_bytes(w.type, w.cols);
  Vnni4Layout layout = pack_vnni4(
      Vnni4Bits::Eight, w.rows, w.cols, kQ8_0BlockSize,
      [&](int64_t r, uint8_t* u, uint16_t* scales) {
        for (int64_t g = 0; g < w.cols / kQ8_0BlockSize; ++g) {
          const auto b = load_block<BlockQ8_0>(w.data + r * row_bytes, g);
          scales[g] = b.d;
          for (int64_t j = 0; j < kQ8_0BlockSize; ++j)
            u[g * kQ8_0BlockSize + j] = static_cast<uint8_t>(static_cast<uint8_t>(b.qs[j]) ^ 0x80);
        }
      },
      pool);
  Vnni4Spec spec{cat("q8_0/", vnni4_isa_name(isa)), vnni4_kernel(Vnni4Bits::Eight, isa, cpu.vendor_amd), -128, {}, 1.0f, {}};
  // One token reads three distant row blocks at once where measured (AMD Zen
  // 5, the 2B-4T Q8_0 head in-process, passes alternated with a plain read:
  // 30-33 against 26-28 GB/s at 1 thread, 60-66 against 52-60 at 2; two or
  // four blocks at once, and prefetch distances of 0.5-4 KiB, did no better;
  // docs/performance.md "Session 11").
  // No pairs (Vnni4Spec::pair): a region's halves side by side were no faster
  // for q8_0 on the 2B-4T shapes (63-74% of the read against 66-77%), and the
  // head keeps its three streams.
#if LOWBIT_X86_KERNELS
  if (isa == Vnni4Isa::Avx512Vnni && cpu.vendor_amd) spec.streams = {q8_0_gemv3_avx512, 3};
  // Several tokens (a server's batch, prefill of a Q8_0 model): each step's
  // codes loaded once for up to 4 tokens, where each token had read the row
  // block on its own. A Q8_0 head's 4 sequences decoding together on Zen 5:
  // 1.07-1.18x with AVX-512, 1.9x at the AVX-VNNI level (LOWBIT_CPU_DISABLE=
  // avx512f); plain AVX2's widened kernel two tokens at a time ran 0.83x, so
  // it keeps one (docs/performance.md "Session 38").
  if (isa == Vnni4Isa::Avx512Vnni) spec.tokens = q8_0_tokens_avx512;
  if (isa == Vnni4Isa::AvxVnni) spec.tokens = q8_0_tokens_avx_vnni;
#endif
  // Several tokens on NEON: each step's weights flipped once for up to 4 of them.
#if LOWBIT_NEON_KERNELS
  if (spec.kernel == q8_0_gemv_neon) spec.tokens = q8_0_tokens_neon;
#endif
  return make_vnni4_matmul(std::move(layout), spec);
}

}  // namespace

KernelFamily q8_0_kernel_family() {
  return {"q8_0", "Q8_0 16-row interleave, int8 VNNI (AVX-512/AVX-VNNI), int16 vpmaddwd (AVX2) or sdot (NEON)", q8_0_score, q8_0_make};
}

}  // namespace lowbit
