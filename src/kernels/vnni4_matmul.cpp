#include "kernels/vnni4_matmul.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/int1_lut.h"
#include "kernels/read_streams.h"

namespace lowbit {

namespace {

class Vnni4Matmul final : public Matmul {
 public:
  Vnni4Matmul(Vnni4Layout layout, Vnni4Spec spec)
      : Matmul(layout.rows, layout.cols), layout_(std::move(layout)), spec_(std::move(spec)) {}

  std::string kernel_name() const override { return spec_.name; }
  bool uses_int8_activations() const override { return true; }
  int64_t weight_bytes() const override { return layout_.row_blocks() * layout_.block_stride(); }

  // One unit per row block, so decode's q, k, v (and gate, up) of an int2 or
  // int1 model share one parallel region (forward_together).
  int64_t work_units() const override { return layout_.row_blocks(); }
  void prepare_units(const ActivationBatch& in, ThreadPool& pool) const override {
    if (in.k() != cols_) fail("matmul ", spec_.name, ": input has ", in.k(), " features, matrix has ", cols_);
    in.quantize(pool);
    in.group_sums(layout_.group);  // S_g, shared by every row block (and every matrix of this group size)
    if (spec_.tables.build != nullptr) in.build_token_tables(spec_.tables, pool);  // likewise
  }
  void forward_units(const ActivationBatch& in, float* y, int64_t begin, int64_t end) const override {
    const int32_t* sums = in.group_sums(layout_.group);
    const uint8_t* tables = spec_.tables.build == nullptr ? nullptr : in.token_tables(spec_.tables);
    alignas(64) float out[kVnni4Rows];
    // One token: the call's blocks in `count` parts read side by side, where
    // the parts lie far enough apart; the rest one by one below.
    const int parts = spec_.streams.count;
    const int64_t per = parts > 0 ? (end - begin) / parts : 0;
    if (spec_.streams.kernel != nullptr && in.tokens() == 1 && per * layout_.block_stride() >= kStreamsMinApartBytes) {
      alignas(64) float outs[kVnni4MaxStreams][kVnni4Rows];
      Vnni4Task tasks[kVnni4MaxStreams];
      for (int64_t r = 0; r < per; ++r) {
        for (int j = 0; j < parts; ++j) tasks[j] = task(in, sums, tables, begin + j * per + r, 0, outs[j]);
        spec_.streams.kernel(tasks);
        for (int j = 0; j < parts; ++j) store(outs[j], begin + j * per + r, 0, y);
      }
      begin += per * parts;
    }
    if (spec_.tokens != nullptr && in.tokens() > 1 && spec_.tables.build != nullptr) {
      // Tables per token (tens of KB each): token groups outside, so a
      // group's tables stay in cache for the range's row blocks.
      alignas(64) float outs[kVnni4MaxTokens][kVnni4Rows];
      Vnni4Task tasks[kVnni4MaxTokens];
      for (int64_t t0 = 0; t0 < in.tokens(); t0 += kVnni4MaxTokens) {
        const int count = static_cast<int>(std::min<int64_t>(kVnni4MaxTokens, in.tokens() - t0));
        for (int64_t rb = begin; rb < end; ++rb) {
          for (int k = 0; k < count; ++k) tasks[k] = task(in, sums, tables, rb, t0 + k, outs[k]);
          if (count == 1) spec_.kernel(tasks[0]);
          else spec_.tokens(tasks, count);
          for (int k = 0; k < count; ++k) store(outs[k], rb, t0 + k, y);
        }
      }
      return;
    }
    if (spec_.tokens != nullptr && in.tokens() > 1) {
      // Several tokens: up to kVnni4MaxTokens at a time per row block, the
      // block's codes unpacked once for them (a lone last token alone).
      alignas(64) float outs[kVnni4MaxTokens][kVnni4Rows];
      Vnni4Task tasks[kVnni4MaxTokens];
      for (int64_t rb = begin; rb < end; ++rb)
        for (int64_t t0 = 0; t0 < in.tokens(); t0 += kVnni4MaxTokens) {
          const int count = static_cast<int>(std::min<int64_t>(kVnni4MaxTokens, in.tokens() - t0));
          for (int k = 0; k < count; ++k) tasks[k] = task(in, sums, tables, rb, t0 + k, outs[k]);
          if (count == 1) spec_.kernel(tasks[0]);
          else spec_.tokens(tasks, count);
          for (int k = 0; k < count; ++k) store(outs[k], rb, t0 + k, y);
        }
      return;
    }
    for (int64_t rb = begin; rb < end; ++rb)
      for (int64_t t = 0; t < in.tokens(); ++t) {
        spec_.kernel(task(in, sums, tables, rb, t, out));
        store(out, rb, t, y);
      }
  }
  // One token and another matrix of this kernel whose row blocks meet the
  // same activations the same way (group, lut, xsum factor): decode's q, k, v
  // or gate, up.
  bool pairs_with(const Matmul& other, int64_t tokens) const override {
    const auto* o = dynamic_cast<const Vnni4Matmul*>(&other);
    return tokens == 1 && spec_.pair != nullptr && o != nullptr && o->spec_.pair == spec_.pair && o->cols() == cols_ &&
           o->layout_.group == layout_.group && o->spec_.xsum_factor == spec_.xsum_factor && o->spec_.lut == spec_.lut;
  }
  void forward_pair(const Matmul& other, const ActivationBatch& in, float* y, float* y_other, int64_t ua,
                    int64_t ub) const override {
    const auto& o = static_cast<const Vnni4Matmul&>(other);
    const int32_t* sums = in.group_sums(layout_.group);  // the same group: pairs_with
    alignas(64) float outs[2][kVnni4Rows];
    const Vnni4Task tasks[2] = {task(in, sums, nullptr, ua, 0, outs[0]), o.task(in, sums, nullptr, ub, 0, outs[1])};
    spec_.pair(tasks);
    store(outs[0], ua, 0, y);
    o.store(outs[1], ub, 0, y_other);
  }
  void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const override {
    const Matmul* self = this;
    forward_together({&self, 1}, in, {&y, 1}, pool);
  }

 private:
  // Row block rb times token t (sums: in's group sums for layout_.group;
  // tables: in's token tables, where the spec has them), into out.
  Vnni4Task task(const ActivationBatch& in, const int32_t* sums, const uint8_t* tables, int64_t rb, int64_t t,
                 float* out) const {
    const uint8_t* t_tables = tables == nullptr ? nullptr : tables + t * spec_.tables.bytes_per_token(cols_);
    return Vnni4Task{layout_.codes(rb), layout_.group_bytes(), layout_.groups(), layout_.group / layout_.k_per_step(),
                     in.q() + t * in.k_padded(), sums + t * layout_.groups(), spec_.xsum_factor, spec_.lut.data(),
                     spec_.tensor_scale / in.scale()[t], out, t_tables};
  }
  // Row block rb's rows of out into token t's y.
  void store(const float* out, int64_t rb, int64_t t, float* y) const {
    std::copy(out, out + std::min<int64_t>(kVnni4Rows, rows_ - rb * kVnni4Rows), y + t * rows_ + rb * kVnni4Rows);
  }

  Vnni4Layout layout_;
  Vnni4Spec spec_;
};

}  // namespace

Vnni4Isa vnni4_isa(const CpuFeatures& cpu) {
#if LOWBIT_X86_KERNELS
  if (cpu.has_avx512_level() && cpu.avx512vnni) return Vnni4Isa::Avx512Vnni;
  if (cpu.has_avx2_level()) return cpu.avx_vnni ? Vnni4Isa::AvxVnni : Vnni4Isa::Avx2;
#endif
#if LOWBIT_NEON_KERNELS
  if (cpu.has_neon_level()) return Vnni4Isa::NeonDot;
#endif
  return Vnni4Isa::None;
}

const char* vnni4_isa_name(Vnni4Isa isa) {
  switch (isa) {
    case Vnni4Isa::Avx512Vnni: return "avx512-vnni";
    case Vnni4Isa::AvxVnni: return "avx-vnni";
    case Vnni4Isa::Avx2: return "avx2";
    case Vnni4Isa::NeonDot: return "neon-dotprod";
    case Vnni4Isa::None: break;
  }
  return "none";
}

Vnni4Kernel vnni4_kernel(Vnni4Bits bits, Vnni4Isa isa, bool nta_prefetch) {
#if LOWBIT_NEON_KERNELS
  if (isa == Vnni4Isa::NeonDot)
    return bits == Vnni4Bits::Eight ? q8_0_gemv_neon
           : bits == Vnni4Bits::Two ? int2_gemv_neon
           : bits == Vnni4Bits::One ? int1_gemv_neon
           : bits == Vnni4Bits::Four ? int4_linear_gemv_neon
                                     : nullptr;  // int1_lut's lookups are AVX2 code
#endif
#if LOWBIT_X86_KERNELS
  if (!vnni4_isa_x86(isa)) return nullptr;
  if (bits == Vnni4Bits::Four) return int4_linear_gemv_avx2;
  if (bits == Vnni4Bits::OneLookup) return int1_lut_gemv_avx2;
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
      return bits == Vnni4Bits::Two ? int2_gemv_avx2 : bits == Vnni4Bits::One ? int1_gemv_avx2 : q8_0_gemv_avx2;
    case Vnni4Isa::NeonDot:
    case Vnni4Isa::None: break;
  }
#endif
  return nullptr;
}

std::unique_ptr<Matmul> make_vnni4_matmul(Vnni4Layout layout, Vnni4Spec spec) {
  return std::make_unique<Vnni4Matmul>(std::move(layout), std::move(spec));
}

}  // namespace lowbit
