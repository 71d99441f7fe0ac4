#include "kernels/vnni4_matmul.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace lowbit {

namespace {

class Vnni4Matmul final : public Matmul {
 public:
  Vnni4Matmul(Vnni4Layout layout, Vnni4Spec spec)
      : Matmul(layout.rows, layout.cols), layout_(std::move(layout)), spec_(std::move(spec)) {}

  std::string kernel_name() const override { return spec_.name; }
  bool uses_int8_activations() const override { return true; }
  int64_t weight_bytes() const override { return layout_.row_blocks() * layout_.block_stride(); }

  void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const override {
    if (in.k() != cols_) fail("matmul ", spec_.name, ": input has ", in.k(), " features, matrix has ", cols_);
    in.quantize(pool);
    const int64_t tokens = in.tokens(), groups = layout_.groups(), group = layout_.group;
    // S_g per token, shared by every row block: [tokens][groups]. Grows once per
    // calling thread, so the token loop does not allocate.
    thread_local std::vector<int32_t> xsum;
    if (xsum.size() < static_cast<size_t>(tokens * groups)) xsum.resize(static_cast<size_t>(tokens * groups));
    for (int64_t t = 0; t < tokens; ++t) {
      const int8_t* x = in.q() + t * in.k_padded();
      for (int64_t g = 0; g < groups; ++g) {
        int32_t s = 0;
        for (int64_t k = g * group; k < (g + 1) * group; ++k) s += x[k];
        xsum[t * groups + g] = s;
      }
    }
    const int32_t* sums = xsum.data();
    // Chunks of 4 row blocks (64 rows): small enough that 2560 rows make 40
    // chunks for dynamic balancing, large enough to amortise the atomic.
    pool.parallel_for(layout_.row_blocks(), 4, [&](int64_t begin, int64_t end, int) {
      alignas(64) float out[kVnni4Rows];
      for (int64_t rb = begin; rb < end; ++rb) {
        const int64_t n = std::min<int64_t>(kVnni4Rows, rows_ - rb * kVnni4Rows);
        for (int64_t t = 0; t < tokens; ++t) {
          const Vnni4Task task{layout_.codes(rb), layout_.group_bytes(), groups, group / layout_.k_per_step(),
                               in.q() + t * in.k_padded(), sums + t * groups, spec_.xsum_factor,
                               spec_.lut.data(), spec_.tensor_scale / in.scale()[t], out};
          spec_.kernel(task);
          std::copy(out, out + n, y + t * rows_ + rb * kVnni4Rows);
        }
      }
    });
  }

 private:
  Vnni4Layout layout_;
  Vnni4Spec spec_;
};

}  // namespace

Vnni4Isa vnni4_isa(const CpuFeatures& cpu) {
  if (cpu.has_avx512_level() && cpu.avx512vnni) return Vnni4Isa::Avx512Vnni;
  if (cpu.has_avx2_level()) return cpu.avx_vnni ? Vnni4Isa::AvxVnni : Vnni4Isa::Avx2;
  return Vnni4Isa::None;
}

const char* vnni4_isa_name(Vnni4Isa isa) {
  switch (isa) {
    case Vnni4Isa::Avx512Vnni: return "avx512-vnni";
    case Vnni4Isa::AvxVnni: return "avx-vnni";
    case Vnni4Isa::Avx2: return "avx2";
    case Vnni4Isa::None: break;
  }
  return "none";
}

Vnni4Kernel vnni4_kernel(Vnni4Bits bits, Vnni4Isa isa, bool nta_prefetch) {
  switch (isa) {
    case Vnni4Isa::Avx512Vnni:
      if (!nta_prefetch)
        return bits == Vnni4Bits::Two   ? int2_gemv_avx512_t0
               : bits == Vnni4Bits::One ? int1_gemv_avx512_t0
                                        : q8_0_gemv_avx512_t0;
      return bits == Vnni4Bits::Two ? int2_gemv_avx512 : bits == Vnni4Bits::One ? int1_gemv_avx512 : q8_0_gemv_avx512;
    case Vnni4Isa::AvxVnni:
      return bits == Vnni4Bits::Two   ? int2_gemv_avx_vnni
             : bits == Vnni4Bits::One ? int1_gemv_avx_vnni
                                      : q8_0_gemv_avx_vnni;
    case Vnni4Isa::Avx2:
      return bits == Vnni4Bits::Two ? int2_gemv_avx2 : bits == Vnni4Bits::One ? int1_gemv_avx2 : nullptr;
    case Vnni4Isa::None: break;
  }
  return nullptr;
}

std::unique_ptr<Matmul> make_vnni4_matmul(Vnni4Layout layout, Vnni4Spec spec) {
  return std::make_unique<Vnni4Matmul>(std::move(layout), std::move(spec));
}

}  // namespace lowbit
