// A weight matrix ready to multiply: the file's weights repacked, at load, into
// one kernel's layout (design.md: file formats are for interchange, kernel
// layouts for speed). The model sees only this interface.
//
// Shapes: W is [rows][cols] (rows = output features N, cols = input features K,
// i.e. GGUF shape {K, N}); x is [tokens][cols]; y is [tokens][rows].
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/ggml_types.h"
#include "core/thread_pool.h"

namespace lowbit {

// Weights as the file holds them.
struct WeightView {
  std::string name;  // tensor name, for errors and -v output
  GgmlType type = GgmlType::F32;
  int64_t rows = 0;  // N
  int64_t cols = 0;  // K
  const uint8_t* data = nullptr;  // the whole tensor in the file's layout
};

// The input of one or more matmuls: [tokens][k] floats, and its per-token int8
// quantization (BitNet absmax), computed once on first request and shared by
// every matrix that reads the same input (q, k and v; gate and up).
// Owned by the model's run state and reused: no allocation per token.
class ActivationBatch {
 public:
  ActivationBatch() = default;
  ActivationBatch(int64_t max_tokens, int64_t max_k);

  // Points at new input; forgets any previous quantization. x must stay valid.
  void set(const float* x, int64_t tokens, int64_t k);

  const float* x() const { return x_; }
  int64_t tokens() const { return tokens_; }
  int64_t k() const { return k_; }

  // Per-token int8 quantization: q [tokens][k_padded], scale [tokens], sum [tokens].
  // k_padded() = k rounded up to 64, zero-filled, so kernels may read whole vectors.
  void quantize(ThreadPool& pool) const;
  // Runs make(t) for every token t on the pool and, where `quantize`,
  // quantizes row t right after it (the same q as quantize()), while the row
  // make(t) has just written is in cache: as a pass of its own over a long
  // prompt, the quantization read its rows back from L3 (docs/performance.md,
  // "Session 30"). make writes row t of x() (set() before).
  void make_rows(ThreadPool& pool, bool quantize, FunctionRef<void(int64_t t)> make) const;
  const int8_t* q() const { return q_.data(); }
  const float* scale() const { return scale_.data(); }
  const int32_t* sum() const { return sum_.data(); }
  int64_t k_padded() const { return (k_ + 63) / 64 * 64; }
  bool quantized() const { return quantized_; }
  // S_g = sum of q over each group of `group` k, per token: [tokens][k / group]
  // (the up-convert kernels' activation sums, vnni4_layout.h). Computed on the
  // first request for a group size after quantize() (up to kGroupSizes sizes
  // side by side, so matrices of different formats can share a region and
  // read theirs on any thread), kept until set(). group is a multiple of 16
  // that divides k. The buffers grow on a size's first use only.
  static constexpr int kGroupSizes = 8;
  const int32_t* group_sums(int64_t group) const;
  // Per-token tables a kernel derives from q (int1_lut's lookup tables):
  // build(q_t, k, out_t) fills bytes_per_token(k) bytes for token t, at
  // token_tables(kind) + t * bytes_per_token(k). build_token_tables builds
  // them on the pool after quantize() (a no-op when built), kept until set();
  // up to kTableKinds kinds side by side. The buffer grows on a kind's first
  // use only. token_tables fails for tables not built.
  struct TableKind {
    void (*build)(const int8_t* q, int64_t k, uint8_t* out);
    int64_t (*bytes_per_token)(int64_t k);
  };
  static constexpr int kTableKinds = 2;
  void build_token_tables(TableKind kind, ThreadPool& pool) const;
  const uint8_t* token_tables(TableKind kind) const;
  // q in the order of AMX tile loads (i2s_amx_gemm.h): per block of 16
  // tokens, per entry c of `cols` (first columns of 64-column blocks), the 16
  // tokens' q[cols[c] .. + 64) one after another, rows past the last token
  // zero: [ceil(tokens / 16)][cols.size()][16][64]. Built on the pool after
  // quantize() for one list of columns (a no-op when built for the same
  // list; another list before set() fails: every matrix reading one batch
  // has the same K), kept until set(). The buffer grows on first use only.
  static constexpr int kTileRows = 16, kTileRowBytes = 64;
  void build_tile_rows(const std::vector<int64_t>& cols, ThreadPool& pool) const;
  const int8_t* tile_rows(const std::vector<int64_t>& cols) const;
  // Block b of tile rows from `tokens` rows of q (row_bytes long, q_stride
  // apart) into out (cols.size() x 16 x 64 bytes); bytes past a row read as 0.
  static void lay_tile_rows(const int8_t* q, int64_t q_stride, int64_t row_bytes, int64_t tokens, int64_t b,
                            const std::vector<int64_t>& cols, int8_t* out);

 private:
  void quantize_row(int64_t t) const;
  // Marks q and everything derived from it (group sums, tables, tile rows) stale.
  void forget_derived() const;

  const float* x_ = nullptr;
  int64_t tokens_ = 0, k_ = 0;
  int64_t max_tokens_ = 0, max_k_ = 0;
  mutable AlignedBuffer<int8_t> q_;
  mutable AlignedBuffer<float> scale_;
  mutable AlignedBuffer<int32_t> sum_;
  mutable bool quantized_ = false;
  struct GroupSums {
    int64_t group = 0;  // 0: slot unused
    bool valid = false;  // computed for the current q
    AlignedBuffer<int32_t> sums;  // [max_tokens][max_k / group]
  };
  mutable GroupSums group_sums_[kGroupSizes];
  struct Tables {
    TableKind kind{nullptr, nullptr};  // build == nullptr: slot unused
    bool valid = false;                // built for the current q
    AlignedBuffer<uint8_t> bytes;      // [max_tokens][bytes_per_token(max_k)]
  };
  mutable Tables tables_[kTableKinds];
  mutable std::vector<int64_t> tile_cols_;  // the list tile_rows_ was built for
  mutable bool tile_rows_valid_ = false;
  mutable AlignedBuffer<int8_t> tile_rows_;
};

class Matmul {
 public:
  virtual ~Matmul() = default;
  // The kernel's name as --kernel spells it plus its ISA, e.g. "i2s/avx512", "ref".
  virtual std::string kernel_name() const = 0;
  // True when forward() reads in.q() (int8 activations) rather than in.x().
  virtual bool uses_int8_activations() const = 0;
  // y[t][n] = sum_k W[n][k] * x[t][k] for every token t of `in`.
  // Integer kernels call in.quantize(pool) themselves (a no-op when done).
  virtual void forward(const ActivationBatch& in, float* y, ThreadPool& pool) const = 0;
  // Bytes of weights (kernel layout) read per token: for bandwidth figures.
  virtual int64_t weight_bytes() const = 0;

  // The same product as forward, in pieces another region can schedule
  // (forward_together): prepare_units once on the pool, then units [begin, end)
  // of [0, work_units()) in any order, on any thread. work_units() == 0 means
  // the kernel keeps its own region and forward_together calls forward.
  virtual int64_t work_units() const { return 0; }
  virtual void prepare_units(const ActivationBatch& in, ThreadPool& pool) const {}
  virtual void forward_units(const ActivationBatch& in, float* y, int64_t begin, int64_t end) const {}
  // True when forward_units costs a fixed amount per call besides its units
  // (tables built per call and shared by its rows): forward_together then
  // gives each thread one range instead of many small chunks.
  virtual bool wants_one_range_per_thread(const ActivationBatch& in) const { return false; }
  // A few tokens: this matrix's `unit` and other's `other_unit` (same input)
  // in one pass, two weight streams far apart read side by side, where
  // pairs_with(other, tokens) says the kernels can for in.tokens() == tokens
  // (forward_together pairs each unit of a region's first half with one of
  // its second half).
  virtual bool pairs_with(const Matmul& other, int64_t tokens) const { return false; }
  virtual void forward_pair(const Matmul& other, const ActivationBatch& in, float* y, float* y_other, int64_t unit,
                            int64_t other_unit) const {}

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }

 protected:
  Matmul(int64_t rows, int64_t cols) : rows_(rows), cols_(cols) {}
  int64_t rows_, cols_;
};

// y_i = W_i x for matrices that read the same input (decode's q, k, v, and
// gate, up): one parallel region over all their units when every one of them
// has units, so the matrices share one hand-off and one wait for the last
// chunk (measured +2-4% on the I2_S matrices of a 2-thread decode step);
// otherwise one forward per matrix. A few chunks per thread: dynamic balance
// without many atomic round trips. Kernels with units run their own forward
// through it too. A few tokens through kernels that pair (Matmul::pairs_with):
// unit v of the region's first half is read beside unit v + half of its second.
void forward_together(std::span<const Matmul* const> ms, const ActivationBatch& in, std::span<float* const> ys,
                      ThreadPool& pool);

// The scalar reference kernel ("ref"): runs any format of src/quant straight
// from the file's layout with the format's reference functions. The slow, sure
// path every other kernel is tested against end to end.
std::unique_ptr<Matmul> make_reference_matmul(const WeightView& w);

}  // namespace lowbit
