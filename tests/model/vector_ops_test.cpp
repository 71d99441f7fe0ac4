// Every vectorized op (kernels/vector_ops.h) at every ISA level this CPU runs
// against its scalar definition (model/ops.cpp), on random data of odd lengths
// and extreme values. quantize_absmax must match bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/half.h"
#include "core/rng.h"
#include "model/ops.h"

namespace lowbit {
namespace {

std::vector<const VectorOps*> isa_tables() {
  std::vector<const VectorOps*> v;
  const CpuFeatures& cpu = cpu_features();
#if LOWBIT_X86_KERNELS
  if (cpu.has_avx512_level() && cpu.amx_bf16) v.push_back(&vector_ops_avx512_amx());
  if (cpu.has_avx512_level()) v.push_back(&vector_ops_avx512());
  if (cpu.has_avx2_level()) v.push_back(&vector_ops_avx2());
#endif
#if LOWBIT_NEON_KERNELS
  if (cpu.has_neon_level()) v.push_back(&vector_ops_neon());
#endif
  return v;
}

const std::vector<int64_t> kLengths = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 127, 2563};

std::vector<float> random_vector(int64_t n, uint64_t seed, float amp = 1.0f) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(rng.normal()) * amp * (i % 13 == 5 ? 30.0f : 1.0f);
  return v;
}

// |got - want| <= rel * scale + abs_tol elementwise, scale = max |want|.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel, const std::string& what,
                  double abs_tol = 0) {
  ASSERT_EQ(got.size(), want.size());
  double scale = 0;
  for (float w : want) scale = std::max(scale, std::fabs(static_cast<double>(w)));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], rel * scale + abs_tol) << what << " at " << i << " of " << got.size();
}

TEST(VectorOps, TablesExistForThisCpu) {
  ASSERT_FALSE(isa_tables().empty()) << "neither AVX2 nor NEON with dotprod here: only the scalar table can run";
  EXPECT_STREQ(best_vector_ops().isa, isa_tables().front()->isa);
}

TEST(VectorOps, RmsNormMatchesScalar) {
  for (const VectorOps* ops : isa_tables()) {
    for (int64_t n : kLengths) {
      const auto x = random_vector(n, 1 + n), w = random_vector(n, 2 + n);
      std::vector<float> want(x.size()), got(x.size());
      rms_norm(x.data(), w.data(), n, 1e-5f, want.data());
      ops->rms_norm(x.data(), w.data(), n, 1e-5f, got.data());
      expect_close(got, want, 1e-6, std::string(ops->isa) + " rms_norm");
      got = x;  // in place
      ops->rms_norm(got.data(), w.data(), n, 1e-5f, got.data());
      expect_close(got, want, 1e-6, std::string(ops->isa) + " rms_norm in place");
    }
    const std::vector<float> zeros(37, 0.0f), w(37, 1.0f);
    std::vector<float> out(37, NAN);
    ops->rms_norm(zeros.data(), w.data(), 37, 1e-5f, out.data());
    for (float v : out) EXPECT_EQ(v, 0.0f);
  }
}

TEST(VectorOps, RopeRotateMatchesScalar) {
  for (const VectorOps* ops : isa_tables()) {
    for (int64_t head_dim : {8, 48, 64, 128, 100}) {
      for (int64_t n_rot : {head_dim, head_dim / 2}) {
        if (n_rot % 2) continue;
        for (bool interleaved : {false, true}) {
          std::vector<float> cos(static_cast<size_t>(n_rot / 2)), sin(cos.size());
          rope_angles(4095, 500000.0f, n_rot, cos.data(), sin.data());
          const auto x = random_vector(3 * head_dim, static_cast<uint64_t>(head_dim + n_rot));
          auto want = x, got = x;
          rope_rotate(want.data(), 3, head_dim, n_rot, cos.data(), sin.data(), interleaved);
          ops->rope_rotate(got.data(), 3, head_dim, n_rot, cos.data(), sin.data(), interleaved);
          expect_close(got, want, 1e-6, std::string(ops->isa) + " rope");
        }
      }
    }
  }
}

TEST(VectorOps, SoftmaxMatchesScalar) {
  for (const VectorOps* ops : isa_tables()) {
    for (int64_t n : kLengths) {
      for (float amp : {0.1f, 5.0f, 1000.0f}) {
        auto want = random_vector(n, 3 + n, amp);
        for (auto& v : want) v -= 50.0f;  // all negative: padded lanes must not raise the max
        auto got = want;
        softmax(want.data(), n);
        ops->softmax(got.data(), n);
        expect_close(got, want, 1e-5, std::string(ops->isa) + " softmax", 1e-37);
      }
    }
  }
}

TEST(VectorOps, GatesMatchScalar) {
  for (const VectorOps* ops : isa_tables()) {
    for (int64_t n : kLengths) {
      for (float amp : {1.0f, 40.0f}) {
        const auto g = random_vector(n, 4 + n, amp), up = random_vector(n, 5 + n);
        auto want = g, got = g;
        silu_gate(want.data(), up.data(), n);
        ops->silu_gate(got.data(), up.data(), n);
        expect_close(got, want, 1e-6, std::string(ops->isa) + " silu");
        want = g;
        got = g;
        relu2_gate(want.data(), up.data(), n);
        ops->relu2_gate(got.data(), up.data(), n);
        expect_close(got, want, 0, std::string(ops->isa) + " relu2");
      }
    }
  }
}

TEST(VectorOps, AddScaleAndF16StoreMatchScalar) {
  const VectorOps& s = scalar_vector_ops();
  for (const VectorOps* ops : isa_tables()) {
    for (int64_t n : kLengths) {
      auto x = random_vector(n, 6 + n, 100.0f);
      const auto y0 = random_vector(n, 7 + n);
      x[0] = 70000.0f;  // overflows to inf in f16
      if (n > 1) x[1] = 3e-8f;  // f16 subnormal
      auto want = y0, got = y0;
      s.add(want.data(), x.data(), n);
      ops->add(got.data(), x.data(), n);
      expect_close(got, want, 0, std::string(ops->isa) + " add");
      s.scale(want.data(), n, 0.37f);
      ops->scale(got.data(), n, 0.37f);
      expect_close(got, want, 0, std::string(ops->isa) + " scale");
      std::vector<uint16_t> hw(static_cast<size_t>(n)), hg(static_cast<size_t>(n) + 1, 0xabcd);
      s.to_f16(x.data(), hw.data(), n);
      ops->to_f16(x.data(), hg.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hg[i], hw[i]) << ops->isa << " to_f16 at " << i << " of " << n;
      EXPECT_EQ(hg[n], 0xabcd) << "wrote past the end";
    }
  }
}

// Random inputs of attend_f16/f32: `heads` query heads, and n_pos rows of K
// and V (stride apart) in f32 and rounded to f16. The queries are moderate:
// softmax amplifies float reassociation in huge scores.
struct AttentionInputs {
  std::vector<float> q, k32, v32;
  std::vector<uint16_t> k16, v16;
};
AttentionInputs attention_inputs(int64_t heads, int64_t head_dim, int64_t n_pos, int64_t stride, uint64_t q_seed,
                                 uint64_t kv_seed) {
  AttentionInputs a;
  a.q = random_vector(heads * head_dim, q_seed, 0.1f);
  for (auto& v : a.q) v = std::clamp(v, -0.3f, 0.3f);
  a.k32 = random_vector(stride * n_pos, kv_seed);
  a.v32 = random_vector(stride * n_pos, kv_seed + 1);
  for (size_t i = 0; i < a.k32.size(); ++i) {
    a.k16.push_back(float_to_fp16(a.k32[i]));
    a.v16.push_back(float_to_fp16(a.v32[i]));
  }
  return a;
}

// k rows (row j at j * stride) as an f16 cache holds them (vector_ops.h):
// slabs of kKeySlab positions, d-major (key_slab_offset), position j at slab
// position skip + j; in blocks of block_rows positions (a multiple of
// kKeySlab) block_stride apart when given. The slots no position fills hold
// NaN, which a kernel reading them into a result would carry there.
std::vector<uint16_t> key_slabs(const std::vector<uint16_t>& rows, int64_t n_pos, int64_t stride, int64_t skip = 0,
                                int64_t block_rows = INT64_MAX, int64_t block_stride = 0) {
  const int64_t slab = kKeySlab * stride;
  const int64_t blocks = block_rows == INT64_MAX ? 1 : (n_pos + block_rows - 1) / block_rows;
  const int64_t last = block_rows == INT64_MAX ? skip + n_pos : n_pos - (blocks - 1) * block_rows;
  std::vector<uint16_t> slabs(static_cast<size_t>((blocks - 1) * block_stride + (last + kKeySlab - 1) / kKeySlab * slab),
                              uint16_t{0x7e00});
  for (int64_t j = 0; j < n_pos; ++j) {
    const int64_t at = block_rows == INT64_MAX ? 0 : j / block_rows * block_stride;
    const int64_t i = block_rows == INT64_MAX ? skip + j : j % block_rows;
    for (int64_t d = 0; d < stride; ++d)
      slabs[static_cast<size_t>(at + key_slab_offset(i, d, stride))] = rows[static_cast<size_t>(j * stride + d)];
  }
  return slabs;
}

// The scalar attention of all n_pos positions (scale 1 / sqrt(head_dim)).
void scalar_attention(const AttentionInputs& a, bool f16, int64_t heads, int64_t head_dim, int64_t n_pos,
                      int64_t stride, float* scores, float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  if (f16) {
    attend_f16(a.q.data(), heads, key_slabs(a.k16, n_pos, stride).data(), 0, a.v16.data(), stride, n_pos, head_dim,
               scale, scores, out);
  } else {
    attend_f32(a.q.data(), heads, a.k32.data(), a.v32.data(), stride, n_pos, head_dim, scale, scores, out);
  }
}

// A table's attention of positions [first, last), continuing `part`.
void attention_piece(const VectorOps& ops, const AttentionInputs& a, bool f16, int64_t heads, int64_t head_dim,
                     int64_t first, int64_t last, int64_t stride, float* scores, float* out, float* part) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  if (f16) {
    const std::vector<uint16_t> slabs = key_slabs(a.k16, static_cast<int64_t>(a.k16.size()) / stride, stride);
    ops.attend_f16(a.q.data(), heads, slabs.data() + first / kKeySlab * kKeySlab * stride, first % kKeySlab,
                   a.v16.data() + first * stride, stride, last - first, head_dim, scale, scores, out, part);
  } else {
    ops.attend_f32(a.q.data(), heads, a.k32.data() + first * stride, a.v32.data() + first * stride, stride,
                   last - first, head_dim, scale, scores, out, part);
  }
}

// Grouped-query attention: 1-9 query heads over one KV head (groups of 8, 4,
// 2 and a single head, and their mixes), against the scalar head-by-head loop.
TEST(VectorOps, AttentionMatchesScalar) {
  for (const VectorOps* ops : isa_tables()) {
    for (int64_t head_dim : {8, 64, 100, 128, 256}) {
      for (int64_t n_pos : {1, 2, 17, 64, 65, 200}) {
        for (int64_t heads : {1, 2, 3, 4, 5, 8, 9}) {
          const int64_t stride = head_dim * 3 + 5;
          const auto [q, k32, v32, k16, v16] =
              attention_inputs(heads, head_dim, n_pos, stride, 8 + head_dim + heads, 9 + n_pos);
          const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
          std::vector<float> scores(static_cast<size_t>(heads * n_pos));
          std::vector<float> want(static_cast<size_t>(heads * head_dim)), got(want.size());
          const std::string what = cat(ops->isa, " heads ", heads, " head_dim ", head_dim, " n_pos ", n_pos);
          for (int64_t skip : {0, 1, 31}) {  // where the first position lies in its slab
            const std::vector<uint16_t> slabs = key_slabs(k16, n_pos, stride, skip);
            attend_f16(q.data(), heads, slabs.data(), skip, v16.data(), stride, n_pos, head_dim, scale, scores.data(),
                       want.data());
            ops->attend_f16(q.data(), heads, slabs.data(), skip, v16.data(), stride, n_pos, head_dim, scale,
                            scores.data(), got.data(), nullptr);
            expect_close(got, want, 1e-5, cat(what, " attend_f16, ", skip, " slab positions skipped"));
          }
          attend_f32(q.data(), heads, k32.data(), v32.data(), stride, n_pos, head_dim, scale, scores.data(),
                     want.data());
          ops->attend_f32(q.data(), heads, k32.data(), v32.data(), stride, n_pos, head_dim, scale, scores.data(),
                          got.data(), nullptr);
          expect_close(got, want, 1e-5, what + " attend_f32");
        }
      }
    }
  }
}

// Attention over positions cut into ranges (the decoder's split over
// threads), each range's unnormalized part merged by merge_attention_parts:
// the scalar full-range result, on every table, with empty ranges too.
TEST(VectorOps, AttentionInPositionRangesMergesToTheWhole) {
  std::vector<const VectorOps*> tables = isa_tables();
  tables.push_back(&scalar_vector_ops());
  const int64_t head_dim = 100, stride = 311;
  for (const VectorOps* ops : tables) {
    for (int64_t n_pos : {1, 7, 200}) {
      for (int64_t heads : {1, 4, 5}) {
        for (int64_t n_parts : {1, 2, 3, 8}) {
          const AttentionInputs in = attention_inputs(heads, head_dim, n_pos, stride, 20 + heads, 21 + n_pos);
          std::vector<float> scores(static_cast<size_t>(heads * n_pos));
          std::vector<float> want(static_cast<size_t>(heads * head_dim)), got(want.size());
          std::vector<float> outs(static_cast<size_t>(n_parts * heads * head_dim));
          const std::string what =
              cat(ops->isa, " heads ", heads, " n_pos ", n_pos, " in ", n_parts, " ranges");
          for (const bool f16 : {true, false}) {
            std::vector<float> parts(static_cast<size_t>(n_parts * heads * 2));
            for (size_t i = 0; i < parts.size(); i += 2) parts[i] = -INFINITY;  // each range starts empty
            scalar_attention(in, f16, heads, head_dim, n_pos, stride, scores.data(), want.data());
            for (int64_t p = 0; p < n_parts; ++p) {
              const int64_t first = n_pos * p / n_parts, last = n_pos * (p + 1) / n_parts;  // maybe empty
              float* out = outs.data() + p * heads * head_dim;
              float* part = parts.data() + p * heads * 2;
              attention_piece(*ops, in, f16, heads, head_dim, first, last, stride, scores.data(), out, part);
            }
            merge_attention_parts(outs.data(), heads * head_dim, parts.data(), heads * 2, n_parts, heads, head_dim,
                                  got.data());
            expect_close(got, want, 1e-5, what + (f16 ? " f16" : " f32"));
          }
        }
      }
    }
  }
}

// Attention continued piece by piece through one out and part (the decoder
// walks a range of positions block by block this way, the KV heads in turn
// within each block), the pieces in order and in reverse, then divided by
// the sum: the scalar full-range result, on every table. Keys grow with the
// position, so later pieces raise the max (and, reversed, lower ones don't).
TEST(VectorOps, AttentionContinuedPieceByPieceEqualsTheWhole) {
  std::vector<const VectorOps*> tables = isa_tables();
  tables.push_back(&scalar_vector_ops());
  const int64_t stride = 133;
  for (const VectorOps* ops : tables) {
    for (int64_t head_dim : {64, 100, 128}) {
      for (int64_t n_pos : {1, 70, 300}) {
        for (int64_t heads : {1, 4, 5}) {
          for (int64_t n_pieces : {1, 3, 7}) {
            AttentionInputs in = attention_inputs(heads, head_dim, n_pos, stride, 30 + heads, 31 + n_pos);
            for (int64_t j = 0; j < n_pos; ++j) {
              for (int64_t d = 0; d < head_dim; ++d) {
                const auto at = static_cast<size_t>(j * stride + d);
                in.k32[at] += 0.02f * static_cast<float>(j) * (d % 2 == 0 ? 1.0f : -1.0f);
                in.k16[at] = float_to_fp16(in.k32[at]);
              }
            }
            std::vector<float> scores(static_cast<size_t>(heads * n_pos));
            std::vector<float> want(static_cast<size_t>(heads * head_dim)), got(want.size());
            for (const bool f16 : {true, false}) {
              scalar_attention(in, f16, heads, head_dim, n_pos, stride, scores.data(), want.data());
              for (const bool reversed : {false, true}) {
                const std::string what = cat(ops->isa, " heads ", heads, " head_dim ", head_dim, " n_pos ", n_pos, " in ",
                                             n_pieces, reversed ? " pieces reversed" : " pieces", f16 ? " f16" : " f32");
                std::fill(got.begin(), got.end(), NAN);  // not read before a head's first piece
                std::vector<float> part(static_cast<size_t>(heads * 2), 0.0f);
                for (int64_t h = 0; h < heads; ++h) part[static_cast<size_t>(2 * h)] = -INFINITY;
                for (int64_t i = 0; i < n_pieces; ++i) {
                  const int64_t p = reversed ? n_pieces - 1 - i : i;
                  const int64_t first = n_pos * p / n_pieces, last = n_pos * (p + 1) / n_pieces;  // maybe empty
                  attention_piece(*ops, in, f16, heads, head_dim, first, last, stride, scores.data(), got.data(),
                                  part.data());
                }
                for (int64_t h = 0; h < heads; ++h)
                  for (int64_t d = 0; d < head_dim; ++d)
                    got[static_cast<size_t>(h * head_dim + d)] /= part[static_cast<size_t>(2 * h + 1)];
                expect_close(got, want, 1e-5, what);
              }
            }
          }
        }
      }
    }
  }
}

// A block of `tokens` consecutive tokens (positions first .. first+tokens-1)
// and their heads, against each token alone through the scalar attend_f16/f32:
// blocks that fill some or all lanes, rows past one chunk of positions and
// past several, head sizes with a tail, up to kAttendBlockRows rows, and K
// rows that grow with the position, so that later chunks raise each row's max.
TEST(VectorOps, BlockAttentionMatchesEachRowAlone) {
  std::vector<const VectorOps*> tables = isa_tables();
  tables.push_back(&scalar_vector_ops());
  struct Case {
    int64_t head_dim, heads, tokens, first;
  };
  const std::vector<Case> cases = {{8, 2, 32, 0},  {8, 1, 1, 0},    {64, 4, 16, 0},  {64, 4, 16, 70},
                                   {100, 5, 3, 1}, {128, 4, 16, 200}, {128, 1, 64, 5}, {17, 3, 21, 63},
                                   {128, 8, 8, 129}, {64, 64, 1, 40}, {64, 4, 64, 30}, {40, 5, 51, 90}};
  for (const VectorOps* ops : tables) {
    for (const Case& c : cases) {
      const int64_t n_pos = c.first + c.tokens, stride = c.heads * c.head_dim + 3;
      auto [q, k32, v32, k16, v16] =
          attention_inputs(c.tokens * c.heads, c.head_dim, n_pos, stride, 30 + c.head_dim, 31 + c.tokens);
      for (int64_t j = 0; j < n_pos; ++j)
        for (int64_t d = 0; d < c.head_dim; ++d) {
          const float grow = 1.0f + 0.02f * static_cast<float>(j);
          k32[j * stride + d] *= grow;
          k16[j * stride + d] = float_to_fp16(k32[j * stride + d]);
        }
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
      std::vector<int64_t> positions;
      for (int64_t i = 0; i < c.tokens; ++i) positions.push_back(c.first + i);
      const int64_t q_stride = c.heads * c.head_dim, out_stride = q_stride + 7;
      std::vector<float> want(static_cast<size_t>(c.tokens * out_stride), -1.0f), got(want);
      std::vector<float> scores(static_cast<size_t>(c.heads * n_pos));
      std::vector<float> scratch(static_cast<size_t>(attend_block_scratch(c.head_dim)));
      const AttendBlock block = {q.data(), q_stride, got.data(), out_stride, positions.data(),
                                 c.tokens,  c.heads,  c.head_dim, stride,    scale};
      // The same rows in blocks of one chunk's positions, blocks further apart than rows.
      AttendBlock blocked = block;
      blocked.kv_block_rows = kAttendBlockChunk;
      blocked.kv_block_stride = kAttendBlockChunk * stride + 5;
      const int64_t n_blocks = (n_pos + kAttendBlockChunk - 1) / kAttendBlockChunk;
      std::vector<float> k32b(static_cast<size_t>(n_blocks * blocked.kv_block_stride)), v32b(k32b);
      std::vector<uint16_t> v16b(k32b.size());
      for (int64_t j = 0; j < n_pos; ++j) {
        const int64_t at = j / kAttendBlockChunk * blocked.kv_block_stride + j % kAttendBlockChunk * stride;
        std::copy_n(k32.begin() + j * stride, stride, k32b.begin() + at);
        std::copy_n(v32.begin() + j * stride, stride, v32b.begin() + at);
        std::copy_n(v16.begin() + j * stride, stride, v16b.begin() + at);
      }
      const std::vector<uint16_t> k16s = key_slabs(k16, n_pos, stride);
      const std::vector<uint16_t> k16b =
          key_slabs(k16, n_pos, stride, 0, blocked.kv_block_rows, blocked.kv_block_stride);
      for (const bool f16 : {true, false}) {
        const std::string what = cat(ops->isa, f16 ? " f16" : " f32", " head_dim ", c.head_dim, " heads ", c.heads,
                                     " tokens ", c.tokens, " from position ", c.first);
        for (int64_t i = 0; i < c.tokens; ++i) {
          const float* qi = q.data() + i * q_stride;
          float* out = want.data() + i * out_stride;
          if (f16) {
            attend_f16(qi, c.heads, k16s.data(), 0, v16.data(), stride, positions[i] + 1, c.head_dim, scale,
                       scores.data(), out);
          } else {
            attend_f32(qi, c.heads, k32.data(), v32.data(), stride, positions[i] + 1, c.head_dim, scale, scores.data(), out);
          }
        }
        std::fill(got.begin(), got.end(), -1.0f);
        if (f16) {
          ops->attend_block_f16(block, k16s.data(), v16.data(), scratch.data());
        } else {
          ops->attend_block_f32(block, k32.data(), v32.data(), scratch.data());
        }
        expect_close(got, want, 1e-5, what);  // the gaps between rows (-1) untouched
        std::fill(got.begin(), got.end(), -1.0f);
        if (f16) {
          ops->attend_block_f16(blocked, k16b.data(), v16b.data(), scratch.data());
        } else {
          ops->attend_block_f32(blocked, k32b.data(), v32b.data(), scratch.data());
        }
        expect_close(got, want, 1e-5, what + " (cache in blocks)");
      }
    }
  }
}

// Block attention over caches of F16 extremes, each row against attend_f16
// alone: the largest finite values, subnormals down to the smallest, signed
// zeros and values with all 10 fraction bits set, mixed with ordinary ones;
// queries from 1e-6 to 1e-4 in size (scores of a few units over keys up to
// 65504). The AMX table cuts every f16 into two bf16 pieces and every float
// into three, which must hold these exactly. A second cache holds values
// only subnormal, so that the outputs (~1e-5) show the smallest pieces; a
// third the same value everywhere, so that the output is that value within
// float rounding (2e-6), whatever the weights: a piece of them lost shows.
// A fourth takes queries near 1 and keys near 20, scores of tens to hundreds,
// so that most weights lie at exp's floor (~1e-38), where the pieces of a
// float run into its denormals.
TEST(VectorOps, BlockAttentionAtF16Extremes) {
  std::vector<const VectorOps*> tables = isa_tables();
  tables.push_back(&scalar_vector_ops());
  const std::vector<uint16_t> wide = {0x7bff, 0xfbff, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400,
                                      0x8000, 0x0000, 0x3bff, 0x47ff, 0xc7ff, 0x33ff, 0x5bff};
  const std::vector<uint16_t> subnormal = {0x0001, 0x8001, 0x03ff, 0x83ff, 0x0155, 0x82aa, 0x0200, 0x0000};
  const int64_t head_dim = 128, heads = 4, tokens = 24, first = 100, n_pos = first + tokens, stride = head_dim + 5;
  Rng rng(77);
  std::vector<float> q(static_cast<size_t>(tokens * heads * head_dim));
  for (float& x : q) {
    const double size = std::pow(10.0, -6.0 + 2.0 * rng.uniform());
    x = static_cast<float>((rng.uniform() < 0.5 ? -size : size) * (1.0 + rng.uniform()));
  }
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < tokens; ++i) positions.push_back(first + i);
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const auto pick = [&](const std::vector<uint16_t>& from) {
    return from[static_cast<size_t>(rng.uniform() * static_cast<double>(from.size())) % from.size()];
  };
  std::vector<float> q_sharp(q.size());
  for (float& x : q_sharp) x = static_cast<float>(rng.normal());
  enum Values { kWide, kSubnormal, kOne, kSharp };
  for (const Values values : {kWide, kSubnormal, kOne, kSharp}) {
    std::vector<uint16_t> k(static_cast<size_t>(n_pos * stride)), v(k.size());
    for (size_t i = 0; i < k.size(); ++i) {
      k[i] = values == kSharp         ? float_to_fp16(static_cast<float>(20.0 * rng.normal()))
             : rng.uniform() < 0.3 ? pick(wide)
                                   : float_to_fp16(static_cast<float>(4.0 * rng.normal()));
      v[i] = values == kOne          ? uint16_t{0x3bff}  // 1 - 2^-11
             : values == kSubnormal ? pick(subnormal)
             : rng.uniform() < 0.3  ? pick(wide)
                                    : float_to_fp16(static_cast<float>(rng.normal()));
    }
    k = key_slabs(k, n_pos, stride);  // as the f16 cache holds k
    const int64_t q_stride = heads * head_dim;
    const std::vector<float>& qs = values == kSharp ? q_sharp : q;
    std::vector<float> want(q.size()), got(q.size()), scores(static_cast<size_t>(heads * n_pos));
    for (int64_t i = 0; i < tokens; ++i)
      attend_f16(qs.data() + i * q_stride, heads, k.data(), 0, v.data(), stride, positions[static_cast<size_t>(i)] + 1,
                 head_dim, scale, scores.data(), want.data() + i * q_stride);
    double largest = 0;
    for (float w : want) largest = std::max(largest, std::fabs(static_cast<double>(w)));
    ASSERT_GT(largest, values == kSubnormal ? 1e-6 : values == kOne || values == kSharp ? 0.99 : 1e3)
        << "the outputs should show the cache's values";
    std::vector<float> scratch(static_cast<size_t>(attend_block_scratch(head_dim)));
    const AttendBlock block = {qs.data(), q_stride, got.data(), q_stride, positions.data(),
                               tokens,   heads,    head_dim,   stride,   scale};
    for (const VectorOps* ops : tables) {
      std::fill(got.begin(), got.end(), NAN);
      ops->attend_block_f16(block, k.data(), v.data(), scratch.data());
      const char* what = values == kWide        ? " wide values"
                         : values == kSubnormal ? " subnormal values"
                         : values == kOne       ? " one value"
                                                : " sharp scores";
      expect_close(got, want, values == kOne ? 2e-6 : 1e-5, cat(ops->isa, what));
    }
  }
}

TEST(VectorOps, QuantizeAbsmaxIsBitExact) {
  for (const VectorOps* ops : isa_tables()) {
    for (int64_t n : kLengths) {
      std::vector<std::vector<float>> cases = {random_vector(n, 11 + n), random_vector(n, 12 + n, 1e-7f),
                                               std::vector<float>(static_cast<size_t>(n), 0.0f)};
      // Exact ties: max 127 gives s = 1, so x.5 values land on half-way points.
      std::vector<float> ties(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) ties[i] = (i % 2 ? -1.0f : 1.0f) * (static_cast<float>(i % 127) + 0.5f);
      ties[0] = 127.0f;
      cases.push_back(ties);
      // The floats next to those half-way points, on both sides, and the
      // largest float below 1/2: where rounding by adding just under a half
      // (simd::kHalfBelow) would go wrong if it could.
      std::vector<float> near(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const float half_way = static_cast<float>(i / 2 % 127) + 0.5f;
        near[i] = (i % 3 ? 1.0f : -1.0f) * std::nextafter(half_way, i % 2 ? 0.0f : 200.0f);
      }
      near[0] = 127.0f;
      if (n > 2) near[1] = std::nextafter(0.5f, 0.0f), near[2] = -std::nextafter(0.5f, 0.0f);
      cases.push_back(near);
      for (const auto& x : cases) {
        std::vector<int8_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n) + 1, 99);
        const ActivationRowQuant w = quantize_activations_absmax_ref(x.data(), n, want.data());
        const ActivationRowQuant g = ops->quantize_absmax(x.data(), n, got.data());
        EXPECT_EQ(g.scale, w.scale) << ops->isa << " n " << n;
        EXPECT_EQ(g.sum, w.sum) << ops->isa << " n " << n;
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << ops->isa << " at " << i << " of " << n;
        EXPECT_EQ(got[n], 99) << "wrote past the end";
      }
    }
  }
}

// Every group size of the up-convert formats (16, 32, 64, 128, whole rows),
// odd multiples of 16 that leave a masked tail, and all -128 / all +127 bytes.
TEST(VectorOps, GroupSumsMatchTheScalarLoop) {
  Rng rng(21);
  for (const VectorOps* ops : isa_tables()) {
    for (int64_t group : {16, 32, 48, 64, 80, 128, 2560, 6912}) {
      const int64_t n = group * (group >= 2560 ? 1 : 7);
      std::vector<std::vector<int8_t>> cases = {std::vector<int8_t>(static_cast<size_t>(n), -128),
                                                std::vector<int8_t>(static_cast<size_t>(n), 127)};
      cases.emplace_back(static_cast<size_t>(n));
      for (auto& v : cases.back()) v = static_cast<int8_t>(static_cast<int>(rng.below(256)) - 128);
      for (const auto& q : cases) {
        std::vector<int32_t> want(static_cast<size_t>(n / group)), got(static_cast<size_t>(n / group) + 1, 99);
        activation_group_sums_ref(q.data(), n, group, want.data());
        ops->group_sums_i8(q.data(), n, group, got.data());
        for (int64_t g = 0; g < n / group; ++g) ASSERT_EQ(got[g], want[g]) << ops->isa << " group " << group << " #" << g;
        EXPECT_EQ(got[n / group], 99) << "wrote past the end";
        if (&q == &cases[0]) {
          EXPECT_EQ(want[0], -128 * group) << "the scalar loop itself";
        }
      }
    }
  }
}

// log sum exp against one in double throughout, on random logits (a
// vocabulary's length among them), a maximum placed in the last partial
// vector, constant rows (lanes past n counted as exp(0 - max) would show),
// and logits far apart (exp of -2e4 underflows).
TEST(VectorOps, LogSumExpMatchesDouble) {
  std::vector<const VectorOps*> tables = isa_tables();
  tables.push_back(&scalar_vector_ops());
  const auto in_double = [](const std::vector<float>& x) {
    const double max = *std::max_element(x.begin(), x.end());
    double sum = 0;
    for (float v : x) sum += std::exp(static_cast<double>(v) - max);
    return max + std::log(sum);
  };
  std::vector<int64_t> lengths = kLengths;
  lengths.push_back(128256);
  for (const VectorOps* ops : tables) {
    for (int64_t n : lengths) {
      for (float amp : {1.0f, 8.0f}) {
        std::vector<float> x = random_vector(n, static_cast<uint64_t>(n) + 3, amp);
        EXPECT_NEAR(ops->log_sum_exp(x.data(), n), in_double(x), 1e-6) << ops->isa << " n " << n << " amp " << amp;
        x.back() = 400.0f;  // the maximum in the tail
        EXPECT_NEAR(ops->log_sum_exp(x.data(), n), in_double(x), 1e-6) << ops->isa << " n " << n << ", max last";
      }
      const std::vector<float> flat(static_cast<size_t>(n), -3.25f);
      EXPECT_NEAR(ops->log_sum_exp(flat.data(), n), -3.25 + std::log(static_cast<double>(n)), 1e-12)
          << ops->isa << " n " << n << ", constant";
    }
    const float apart[3] = {1e4f, -1e4f, 0.0f};
    EXPECT_NEAR(ops->log_sum_exp(apart, 3), 1e4, 1e-9) << ops->isa;
    EXPECT_NEAR(ops->log_sum_exp(apart + 1, 2), 0.0, 1e-9) << ops->isa;
  }
}

}  // namespace
}  // namespace lowbit
