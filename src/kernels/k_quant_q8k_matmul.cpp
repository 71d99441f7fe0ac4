#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/error.h"
#include "kernels/k_quant_q8k.h"
#include "kernels/owned_rows.h"
#include "quant/iq4_xs.h"
#include "quant/q2_k.h"
#include "quant/q3_k.h"
#include "quant/q4_k.h"
#include "quant/q5_k.h"
#include "quant/q6_k.h"

namespace lowbit {

namespace {

// What differs between the k-quant x Q8_K families: the row kernel, the
// activation sums it takes (sums[l] = factor * sum of q over `width` values
// from width * l; width 0: none) and the layout it takes the rows in (the
// file's, or `relayout` applied to each row of the copy). The kernel takes one
// token (`row`: AVX-512's) or up to kQ8KMaxTokens at once (`tokens`: AVX2's);
// the other is null.
struct Q8KSpec {
  const char* name;  // "q4_k_q8k/avx2"
  int64_t sum_width;
  int32_t sum_factor;
  float (*row)(const uint8_t* row, int64_t blocks, const int8_t* q, const int32_t* sums, const float* dx);
  void (*tokens)(const uint8_t* row, int64_t blocks, int tokens, const int8_t* const* q, const int32_t* const* sums,
                 const float* const* dx, float* y);
  void (*relayout)(uint8_t* row, int64_t blocks) = nullptr;
};

constexpr int64_t kQ8KBlock = 256;
static_assert(kQ6_KBlockSize == kQ8KBlock && kQ5_KBlockSize == kQ8KBlock && kQ4_KBlockSize == kQ8KBlock &&
              kQ3_KBlockSize == kQ8KBlock && kQ2_KBlockSize == kQ8KBlock && kIq4XsBlockSize == kQ8KBlock);

class KQuantQ8KMatmul final : public Matmul {
 public:
  KQuantQ8KMatmul(const WeightView& w, const Q8KSpec& spec, ThreadPool& pool)
      : Matmul(w.rows, w.cols),
        name_(w.name),
        spec_(spec),
        row_bytes_(ggml_row_bytes(w.type, w.cols)),
        weights_(copy_rows(w, row_bytes_, pool)) {
    if (spec_.relayout == nullptr) return;
    pool.parallel_for(rows_, 256, [&](int64_t begin, int64_t end, int) {
      for (int64_t r = begin; r < end; ++r) spec_.relayout(weights_.data() + r * row_bytes_, cols_ / kQ8KBlock);
    });
  }

  std::string kernel_name() const override { return spec_.name; }
  // It quantizes in.x() itself, per block of 256 (not the per-token int8 of in.q()).
  bool uses_int8_activations() const override { return false; }
  int64_t weight_bytes() const override { return row_bytes_ * rows_; }

  void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const override {
    if (in.k() != cols_) fail("tensor ", name_, ": input has ", in.k(), " features, matrix has ", cols_);
    const int64_t tokens = in.tokens(), k = cols_, blocks = cols_ / kQ8KBlock, width = spec_.sum_width;
    // Per token: int8 activations, block scales, activation sums. Grown once
    // per calling thread, so the token loop does not allocate.
    thread_local std::vector<int8_t> q;
    thread_local std::vector<float> dx;
    thread_local std::vector<int32_t> sums;
    if (q.size() < static_cast<size_t>(tokens * k)) q.resize(static_cast<size_t>(tokens * k));
    if (dx.size() < static_cast<size_t>(tokens * blocks)) dx.resize(static_cast<size_t>(tokens * blocks));
    const int64_t per_token = width > 0 ? k / width : 0;  // sums per token
    if (sums.size() < static_cast<size_t>(tokens * per_token)) sums.resize(static_cast<size_t>(tokens * per_token));
    for (int64_t t = 0; t < tokens; ++t) {
      int8_t* qt = q.data() + t * k;
      quantize_activations_q8k(in.x() + t * k, k, qt, dx.data() + t * blocks);
      for (int64_t l = 0; l < per_token; ++l) {
        int32_t s = 0;
        for (int64_t i = 0; i < width; ++i) s += qt[width * l + i];
        sums[static_cast<size_t>(t * per_token + l)] = spec_.sum_factor * s;
      }
    }
    const int8_t* qd = q.data();
    const float* dxd = dx.data();
    const int32_t* sd = sums.data();
    pool.parallel_for(rows_, std::max<int64_t>(16, rows_ / (16 * pool.size())), [&](int64_t begin, int64_t end, int) {
      for (int64_t r = begin; r < end; ++r) {
        const uint8_t* row = weights_.data() + r * row_bytes_;
        if (spec_.row != nullptr) {
          for (int64_t t = 0; t < tokens; ++t)
            y[t * rows_ + r] = spec_.row(row, blocks, qd + t * k, sd + t * per_token, dxd + t * blocks);
          continue;
        }
        // Several tokens at once: the row's values unpacked once for them.
        for (int64_t t = 0; t < tokens; t += kQ8KMaxTokens) {
          const int count = static_cast<int>(std::min<int64_t>(kQ8KMaxTokens, tokens - t));
          const int8_t* qs[kQ8KMaxTokens];
          const int32_t* ss[kQ8KMaxTokens];
          const float* ds[kQ8KMaxTokens];
          float out[kQ8KMaxTokens];
          for (int i = 0; i < count; ++i)
            qs[i] = qd + (t + i) * k, ss[i] = sd + (t + i) * per_token, ds[i] = dxd + (t + i) * blocks;
          spec_.tokens(row, blocks, count, qs, ss, ds, out);
          for (int i = 0; i < count; ++i) y[(t + i) * rows_ + r] = out[i];
        }
      }
    });
  }

 private:
  std::string name_;
  Q8KSpec spec_;
  int64_t row_bytes_;
  AlignedBuffer<uint8_t> weights_;
};

// The row functions are x86 code: elsewhere the specs hold none, and every
// score below is 0 (no AVX2), so nothing makes them.
#if LOWBIT_X86_KERNELS
#define X86_ROW(f) f
#else
#define X86_ROW(f) nullptr
#endif

// Forced only (--kernel ...): auto keeps the float k-quant kernels, which
// compute the model as its format defines it; these are the peers' approximation.
bool avx512_vnni(const CpuFeatures& cpu) { return cpu.has_avx512_level() && cpu.avx512vnni; }

int q6_k_q8k_score(const WeightView& w, const CpuFeatures& cpu) {
  if (w.type != GgmlType::Q6_K || !cpu.has_avx2_level()) return 0;
  return w.cols % kQ8KBlock == 0 ? -1 : 0;
}

// Q2_K, Q3_K, Q4_K, Q5_K or IQ4_XS (`type`) on AVX2.
int k_avx2_score(const WeightView& w, const CpuFeatures& cpu, GgmlType type) {
  if (w.type != type || !cpu.has_avx2_level()) return 0;
  return w.cols % kQ8KBlock == 0 ? -1 : 0;
}
int q4_k_q8k_score(const WeightView& w, const CpuFeatures& cpu) { return k_avx2_score(w, cpu, GgmlType::Q4_K); }
int q5_k_q8k_score(const WeightView& w, const CpuFeatures& cpu) { return k_avx2_score(w, cpu, GgmlType::Q5_K); }
int q2_k_q8k_score(const WeightView& w, const CpuFeatures& cpu) { return k_avx2_score(w, cpu, GgmlType::Q2_K); }
int q3_k_q8k_score(const WeightView& w, const CpuFeatures& cpu) { return k_avx2_score(w, cpu, GgmlType::Q3_K); }
int iq4_xs_q8k_score(const WeightView& w, const CpuFeatures& cpu) { return k_avx2_score(w, cpu, GgmlType::IQ4_XS); }

std::unique_ptr<Matmul> q6_k_q8k_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  if (q6_k_q8k_score(w, cpu) == 0)
    fail("tensor ", w.name, ": kernel q6_k_q8k needs Q6_K weights with whole blocks per row and AVX2 (type ",
         ggml_type_name(w.type), ", ", w.cols, " columns, cpu: ", cpu.describe(), ")");
  const Q8KSpec spec = avx512_vnni(cpu) ? Q8KSpec{"q6_k_q8k/avx512-vnni", 4, 32, X86_ROW(q6_k_q8k_row_avx512), nullptr}
                                        : Q8KSpec{"q6_k_q8k/avx2", 16, 1, nullptr, X86_ROW(q6_k_q8k_tokens_avx2)};
  return std::make_unique<KQuantQ8KMatmul>(w, spec, pool);
}

std::unique_ptr<Matmul> k_avx2_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool, GgmlType type,
                                    const Q8KSpec& spec) {
  if (k_avx2_score(w, cpu, type) == 0)
    fail("tensor ", w.name, ": kernel ", spec.name, " needs ", ggml_type_name(type),
         " weights with whole blocks per row and AVX2 (type ", ggml_type_name(w.type), ", ", w.cols,
         " columns, cpu: ", cpu.describe(), ")");
  return std::make_unique<KQuantQ8KMatmul>(w, spec, pool);
}
std::unique_ptr<Matmul> q4_k_q8k_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  return k_avx2_make(w, cpu, pool, GgmlType::Q4_K,
                     Q8KSpec{"q4_k_q8k/avx2", 32, 1, nullptr, X86_ROW(q4_k_q8k_tokens_avx2)});
}
std::unique_ptr<Matmul> q2_k_q8k_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  return k_avx2_make(w, cpu, pool, GgmlType::Q2_K,
                     Q8KSpec{"q2_k_q8k/avx2", 16, 1, nullptr, X86_ROW(q2_k_q8k_tokens_avx2)});
}
std::unique_ptr<Matmul> q3_k_q8k_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  return k_avx2_make(w, cpu, pool, GgmlType::Q3_K,
                     Q8KSpec{"q3_k_q8k/avx2", 16, 4, nullptr, X86_ROW(q3_k_q8k_tokens_avx2)});
}
std::unique_ptr<Matmul> iq4_xs_q8k_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  return k_avx2_make(w, cpu, pool, GgmlType::IQ4_XS,
                     Q8KSpec{"iq4_xs_q8k/avx2", 0, 0, nullptr, X86_ROW(iq4_xs_q8k_tokens_avx2), iq4_xs_pair_layout});
}
std::unique_ptr<Matmul> q5_k_q8k_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool) {
  return k_avx2_make(w, cpu, pool, GgmlType::Q5_K,
                     Q8KSpec{"q5_k_q8k/avx2", 32, 1, nullptr, X86_ROW(q5_k_q8k_tokens_avx2)});
}

// Every family here rounds the activations to int8: lossless false.
KernelFamily approximate(KernelFamily f) {
  f.lossless = false;
  return f;
}

}  // namespace

void iq4_xs_pair_layout(uint8_t* row, int64_t blocks) {
  for (int64_t i = 0; i < blocks; ++i) {
    uint8_t* qs = row + i * static_cast<int64_t>(sizeof(BlockIq4Xs)) + offsetof(BlockIq4Xs, qs);
    uint8_t index[kIq4XsBlockSize];  // element e's index, the file's order undone
    for (int j = 0; j < 8; ++j)
      for (int l = 0; l < 16; ++l) {
        index[32 * j + l] = qs[16 * j + l] & 15;
        index[32 * j + l + 16] = qs[16 * j + l] >> 4;
      }
    for (int p = 0; p < 4; ++p)
      for (int b = 0; b < 32; ++b) qs[32 * p + b] = static_cast<uint8_t>(index[64 * p + b] | index[64 * p + 32 + b] << 4);
  }
}

KernelFamily q6_k_q8k_kernel_family() {
  return approximate({"q6_k_q8k",
                      "Q6_K x int8 activations per 256 (llama.cpp's Q6_K x Q8_K); approximates q6_k "
                      "(AVX-512 VNNI, AVX2)",
                      q6_k_q8k_score, q6_k_q8k_make});
}

KernelFamily q5_k_q8k_kernel_family() {
  return approximate({"q5_k_q8k",
                      "Q5_K x int8 activations per 256 (llama.cpp's Q5_K x Q8_K), vpmaddubsw; approximates q4_k (AVX2)",
                      q5_k_q8k_score, q5_k_q8k_make});
}

KernelFamily q2_k_q8k_kernel_family() {
  return approximate({"q2_k_q8k",
                      "Q2_K x int8 activations per 256 (llama.cpp's Q2_K x Q8_K), vpmaddubsw; approximates q2_k (AVX2)",
                      q2_k_q8k_score, q2_k_q8k_make});
}

KernelFamily q3_k_q8k_kernel_family() {
  return approximate({"q3_k_q8k",
                      "Q3_K x int8 activations per 256 (llama.cpp's Q3_K x Q8_K), vpmaddubsw; approximates q3_k (AVX2)",
                      q3_k_q8k_score, q3_k_q8k_make});
}

KernelFamily iq4_xs_q8k_kernel_family() {
  return approximate({"iq4_xs_q8k",
                      "IQ4_XS x int8 activations per 256 (llama.cpp's IQ4_XS x Q8_K), vpshufb codebook + "
                      "vpmaddubsw; approximates iq4_xs (AVX2)",
                      iq4_xs_q8k_score, iq4_xs_q8k_make});
}

KernelFamily q4_k_q8k_kernel_family() {
  return approximate({"q4_k_q8k",
                      "Q4_K x int8 activations per 256 (llama.cpp's Q4_K x Q8_K), vpmaddubsw; approximates q4_k (AVX2)",
                      q4_k_q8k_score, q4_k_q8k_make});
}

}  // namespace lowbit
