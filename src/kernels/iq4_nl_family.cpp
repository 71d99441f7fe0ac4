// "iq4_nl": IQ4_NL weights (llama.cpp's 4-bit blocks of 32 indexing a fixed
// non-uniform codebook) row-interleaved 16 at a time in the VNNI4 order, two
// k per byte (vnni4_layout.h, 4-bit), the indices as stored. The kernel looks
// the codebook up with vpshufb (the Arm paper's IQ4_NL by table lookup) and
// multiplies the signed values exactly: the dot is the reference's, bit for bit.
#include "core/error.h"
#include "kernels/aipc_families.h"
#include "kernels/vnni4_matmul.h"
#include "quant/iq4_nl.h"

namespace lowbit {

namespace {

int iq4_nl_score(const WeightView& w, const CpuFeatures& cpu) {
  return w.type == GgmlType::IQ4_NL && vnni4_isa_x86(vnni4_isa(cpu)) ? 20 : 0;  // x86 code only
}

std::unique_ptr<Matmul> iq4_nl_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  if (w.type != GgmlType::IQ4_NL || !vnni4_isa_x86(vnni4_isa(cpu)))
    fail("tensor ", w.name, ": the iq4_nl kernel needs IQ4_NL weights and AVX2 (type ", ggml_type_name(w.type),
         ", cpu: ", cpu.describe(), ")");
#if LOWBIT_X86_KERNELS
  Vnni4Layout layout = pack_nibble_blocks(w, pool);  // the indices as stored
  Vnni4Spec spec{"iq4_nl/avx2", int4_lut_gemv_avx2, 0, {}, 1.0f, {}};
  spec.tokens = int4_lut_tokens_avx2;
  for (int i = 0; i < 16; ++i) spec.lut[static_cast<size_t>(i)] = static_cast<uint8_t>(kIq4NlValues[static_cast<size_t>(i)]);
  return make_vnni4_matmul(std::move(layout), std::move(spec));
#else
  fail("tensor ", w.name, ": the iq4_nl kernel is x86 code, not built here");
#endif
}

}  // namespace

KernelFamily iq4_nl_kernel_family() {
  return {"iq4_nl", "IQ4_NL 16-row interleave, codebook by vpshufb, exact signed int8 dot (AVX2)", iq4_nl_score,
          iq4_nl_make};
}

}  // namespace lowbit
