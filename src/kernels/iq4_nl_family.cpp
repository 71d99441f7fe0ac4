// "iq4_nl": IQ4_NL weights (llama.cpp's 4-bit blocks of 32 indexing a fixed
// non-uniform codebook) row-interleaved 16 at a time in the VNNI4 order, two
// k per byte (vnni4_layout.h, 4-bit), the indices as stored. The kernel looks
// the codebook up with vpshufb (the Arm paper's IQ4_NL by table lookup) and
// multiplies the signed values exactly: the dot is the reference's, bit for bit.
// On NEON `tbl` looks the codebook up and sdot multiplies signed x signed.
#include "core/error.h"
#include "kernels/aipc_families.h"
#include "kernels/vnni4_matmul.h"
#include "quant/iq4_nl.h"

namespace lowbit {

namespace {

// The kernels of this build for a CPU: plain AVX2 at every x86 level, sdot on
// NEON; {nullptr, nullptr} where neither runs.
struct Iq4NlKernels {
  const char* name;
  Vnni4Kernel one;
  void (*tokens)(const Vnni4Task*, int);
};
Iq4NlKernels iq4_nl_kernels(const CpuFeatures& cpu) {
  const Vnni4Isa isa = vnni4_isa(cpu);
#if LOWBIT_X86_KERNELS
  if (vnni4_isa_x86(isa)) return {"iq4_nl/avx2", int4_lut_gemv_avx2, int4_lut_tokens_avx2};
#endif
#if LOWBIT_NEON_KERNELS
  if (isa == Vnni4Isa::NeonDot) return {"iq4_nl/neon-dotprod", int4_lut_gemv_neon, int4_lut_tokens_neon};
#endif
  (void)isa;
  return {"", nullptr, nullptr};
}

int iq4_nl_score(const WeightView& w, const CpuFeatures& cpu) {
  return w.type == GgmlType::IQ4_NL && iq4_nl_kernels(cpu).one != nullptr ? 20 : 0;
}

std::unique_ptr<Matmul> iq4_nl_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  const Iq4NlKernels kernels = iq4_nl_kernels(cpu);
  if (w.type != GgmlType::IQ4_NL || kernels.one == nullptr)
    fail("tensor ", w.name, ": the iq4_nl kernel needs IQ4_NL weights and AVX2 or NEON dotprod (type ",
         ggml_type_name(w.type), ", cpu: ", cpu.describe(), ")");
  Vnni4Layout layout = pack_nibble_blocks(w, pool);  // the indices as stored
  Vnni4Spec spec{kernels.name, kernels.one, 0, {}, 1.0f, {}};
  spec.tokens = kernels.tokens;
  for (int i = 0; i < 16; ++i) spec.lut[static_cast<size_t>(i)] = static_cast<uint8_t>(kIq4NlValues[static_cast<size_t>(i)]);
  return make_vnni4_matmul(std::move(layout), std::move(spec));
}

}  // namespace

KernelFamily iq4_nl_kernel_family() {
  return {"iq4_nl", "IQ4_NL 16-row interleave, codebook by vpshufb (AVX2) or tbl (NEON), exact signed int8 dot", iq4_nl_score,
          iq4_nl_make};
}

}  // namespace lowbit
