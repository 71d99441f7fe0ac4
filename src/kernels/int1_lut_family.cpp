// "int1_lut": +-1 weights (Q1_0) by 4-bit table lookup (int1_lut.h). Below
// AVX-512 it takes over from int1's bit planes: on an Intel Xeon core the
// lookups took 0.95 cycles per 32 weights, int1's 256-bit kernels 1.9-2.1 with
// AVX-VNNI or without (docs/performance.md "Session 25"). With AVX-512 int1
// stays the default (0.76-0.85, and 95-100% of the read bandwidth per core).
#include "core/error.h"
#include "kernels/aipc_families.h"
#include "kernels/int1_lut.h"
#include "kernels/vnni4_matmul.h"

namespace lowbit {

namespace {

int int1_lut_score(const WeightView& w, const CpuFeatures& cpu) {
  if (w.type != GgmlType::Q1_0) return 0;
  const Vnni4Isa isa = vnni4_isa(cpu);
  if (isa == Vnni4Isa::Avx2 || isa == Vnni4Isa::AvxVnni) return 25;  // int1 scores 20
  return vnni4_isa_x86(isa) ? 15 : 0;                                 // x86 code only
}

std::unique_ptr<Matmul> int1_lut_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  if (w.type != GgmlType::Q1_0 || !vnni4_isa_x86(vnni4_isa(cpu)))
    fail("tensor ", w.name, ": the int1_lut kernel needs Q1_0 weights and AVX2 (type ", ggml_type_name(w.type),
         ", cpu: ", cpu.describe(), ")");
#if LOWBIT_X86_KERNELS
  Vnni4Layout layout = pack_q1_0(w, Vnni4Bits::OneLookup, pool);
  // weight = 2 * bit - 1: I = 2 D - S, as int1.
  Vnni4Spec spec{"int1_lut/avx2", int1_lut_gemv_avx2, -1, {}, 1.0f, {}};
  spec.tokens = int1_lut_tokens_avx2;
  spec.tables = {int1_lut_tables_avx2, int1_lut_table_bytes};
  return make_vnni4_matmul(std::move(layout), std::move(spec));
#else
  fail("tensor ", w.name, ": the int1_lut kernel is x86 code, not built here");
#endif
}

}  // namespace

KernelFamily int1_lut_kernel_family() {
  return {"int1_lut", "1-bit +-1 weights (Q1_0), 4 weights per 4-bit index into per-token vpshufb tables (AVX2)",
          int1_lut_score, int1_lut_make};
}

}  // namespace lowbit
