// VectorOps::attend_block_f16 on AMX: the block attention of
// simd_block_attention_body.h with its two products as BF16 tile dot products
// (tdpbf16ps: 16 x 16 x 32 multiply-adds per instruction, against 16 lanes
// per FMA on AVX-512), computed transposed so that the query rows lie in the
// lanes for the online softmax, as in the AVX-512 body:
//   S^T[j][r]  = sum_d K[j][d] Q^T[d][r]       (a chunk of positions j)
//   out^T[d][r] += sum_j V^T[d][j] P^T[j][r]
//
// BF16 keeps 8 significant bits, so every operand goes in as a sum of bf16
// pieces cut from the top of its bits (exact: each cut leaves the rest):
//   an f16 value (a cached k or v element, 11 bits) = hi + lo;
//   a float (a query or a softmax weight, 24 bits) = p1 + p2 + p3.
// A product takes five of the six piece products, (p1 + p2 + p3) hi +
// (p1 + p2) lo, leaving out p3 lo (below 2^-21 of the whole). Each bf16 x
// bf16 product is exact in float and the tile unit adds in float, so a score
// or an output element is a float dot product in another order. Five
// products at 16 x 16 x 32 per ~17 cycles still come to ~95 float
// multiply-adds per cycle, against the AVX-512 body's ~20.
//
// Layouts: AMX's B operand takes its K index in pairs (row i of a B tile
// holds elements 2i and 2i + 1 of each of its 16 columns side by side); A is
// row-major. Per call:
//   Q^T  B tiles [3 pieces][R / 16 row tiles][Dp / 32 dim steps]: a 16 x 16
//        transpose of each row's 32-bit dim pairs;
//   out^T [R / 16][Dv][16] float, loaded into C tiles and stored per chunk,
//        since the online softmax rescales rows between chunks.
// Per chunk of C positions, made once for all the rows:
//   K    A tiles [2][C / 16 position groups][Dp / 32]: a row per position (the cache's slabs transposed);
//   V^T  A tiles [2][Dv / 16 dim groups][C / 32 position steps]: transposed.
// Per row tile and chunk: S^T [C][16] float (two: the softmax reads one while
// the next row tile's products fill the other), and P^T B tiles [3][C / 32],
// positions 2i and 2i + 1 of each row side by side.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/simd_lanes.h"
#include "kernels/vector_ops.h"
#include "kernels/x86_avx512/amx_tile_config.h"
#include "kernels/x86_avx512/bf16_pieces.h"
#include "kernels/x86_avx512/simd_avx512.h"

namespace lowbit {

namespace {

using S = simd::Avx512;
constexpr int64_t C = kAttendBlockChunk;  // positions per chunk
constexpr int kGroups = C / 16;           // 16-position groups (score C tiles) per chunk
constexpr int kSteps = C / 32;            // 32-position steps (P^T B tiles) per chunk
static_assert(C % 32 == 0, "a chunk is whole 32-position steps");
constexpr int kTile = 512;                // bf16 per tile (16 rows x 64 bytes)

constexpr int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// The hi and lo pieces of 32 f16 values (lanes 0..15 in x0, 16..31 in x1) as
// bf16 rows of an A tile: hi at `row`, lo `lo` bf16 further.
inline void store_f16_pieces(__m512 x0, __m512 x1, uint16_t* row, int64_t lo) {
  __m512i pieces[2];
  pieces_of_32(x0, x1, pieces);
  _mm512_storeu_si512(row, pieces[0]);
  _mm512_storeu_si512(row + lo, pieces[1]);
}

// Where each part lives in scratch (floats from its first 64-byte boundary).
struct Layout {
  int64_t R, Dp, Dv;
  int64_t q, out, m, l, limit, s, p, k, v, end;
  Layout(int64_t rows, int64_t head_dim) {
    R = round_up(rows, 16), Dp = round_up(head_dim, 32), Dv = round_up(head_dim, 16);
    int64_t at = 0;
    const auto take = [&](int64_t floats) {
      const int64_t here = at;
      at += round_up(floats, 16);
      return here;
    };
    q = take(3 * (R / 16) * (Dp / 32) * kTile / 2);
    out = take(Dv * R);
    m = take(R);
    l = take(R);
    limit = take(R);  // int32
    s = take(2 * C * 16);  // two row tiles' S^T: one read, one written
    p = take(3 * kSteps * kTile / 2);
    k = take(2 * kGroups * (Dp / 32) * kTile / 2);
    v = take(2 * (Dv / 16) * kSteps * kTile / 2);
    end = at;
  }
};

// Tile registers: C 0..3, B (the three query or weight pieces) 4..6, A 7.
// C tile `acc` += the five piece products of an A operand's hi tile (at a)
// and lo tile (a + lo) with the three B pieces in tiles 4..6. (The tile
// intrinsics take register numbers as literals: a macro, not a function.)
#define LOWBIT_FIVE_PRODUCTS(acc, a, lo) \
  do {                                   \
    _tile_loadd(7, (a), 64);             \
    _tile_dpbf16ps(acc, 7, 4);           \
    _tile_dpbf16ps(acc, 7, 5);           \
    _tile_dpbf16ps(acc, 7, 6);           \
    _tile_loadd(7, (a) + (lo), 64);      \
    _tile_dpbf16ps(acc, 7, 4);           \
    _tile_dpbf16ps(acc, 7, 5);           \
  } while (false)

// The score products of one row tile, S^T of its positions in the chunk in
// C tiles 0 .. groups-1, as blocks of five tile products, one (dim step,
// position group) each. The softmax of the row tile before issues them a few
// at a time between its own vector work: the tile unit runs them while the
// vector units compute the exps (one after the other, the two took turns).
class ScoreBlocks {
 public:
  ScoreBlocks(const uint16_t* k, int64_t k_piece, int64_t q_piece, int64_t steps)
      : k_(k), k_piece_(k_piece), q_piece_(q_piece), steps_(steps) {}
  // Starts the row tile whose query pieces are at q, over `groups` position groups.
  void start(const uint16_t* q, int64_t groups) {
    q_ = q, groups_ = groups, next_ = 0;
    for (int64_t g = 0; g < groups; ++g) {
      switch (g) {
        case 0: _tile_zero(0); break;
        case 1: _tile_zero(1); break;
        case 2: _tile_zero(2); break;
        default: _tile_zero(3); break;
      }
    }
  }
  int64_t blocks() const { return steps_ * groups_; }
  // Issues blocks until `n` of them have been.
  void issue_until(int64_t n) {
    for (n = std::min(n, blocks()); next_ < n; ++next_) {
      const int64_t st = next_ / groups_, g = next_ % groups_;
      if (g == 0) {
        _tile_loadd(4, q_ + st * kTile, 64);
        _tile_loadd(5, q_ + q_piece_ + st * kTile, 64);
        _tile_loadd(6, q_ + 2 * q_piece_ + st * kTile, 64);
      }
      const uint16_t* kt = k_ + (g * steps_ + st) * kTile;
      switch (g) {
        case 0: LOWBIT_FIVE_PRODUCTS(0, kt, k_piece_); break;
        case 1: LOWBIT_FIVE_PRODUCTS(1, kt, k_piece_); break;
        case 2: LOWBIT_FIVE_PRODUCTS(2, kt, k_piece_); break;
        default: LOWBIT_FIVE_PRODUCTS(3, kt, k_piece_); break;
      }
    }
  }
  // Issues the rest and stores S^T to s ([groups * 16][16] floats).
  void finish(float* s) {
    issue_until(blocks());
    for (int64_t g = 0; g < groups_; ++g) {
      switch (g) {
        case 0: _tile_stored(0, s, 64); break;
        case 1: _tile_stored(1, s + 256, 64); break;
        case 2: _tile_stored(2, s + 512, 64); break;
        default: _tile_stored(3, s + 768, 64); break;
      }
    }
  }

 private:
  const uint16_t* k_;
  int64_t k_piece_, q_piece_, steps_;
  const uint16_t* q_ = nullptr;
  int64_t groups_ = 0, next_ = 0;
};

// out^T C tiles 0 .. NE-1 (16 dims x one row tile each, 256 floats apart
// from out) += V^T x P^T over `steps` 32-position steps.
template <int NE>
void weigh_tiles(const uint16_t* p, const uint16_t* v, int64_t v_piece, int64_t steps, float* out) {
  _tile_loadd(0, out, 64);
  if constexpr (NE > 1) _tile_loadd(1, out + 256, 64);
  if constexpr (NE > 2) _tile_loadd(2, out + 512, 64);
  if constexpr (NE > 3) _tile_loadd(3, out + 768, 64);
  for (int64_t st = 0; st < steps; ++st) {
    _tile_loadd(4, p + st * kTile, 64);
    _tile_loadd(5, p + kSteps * kTile + st * kTile, 64);
    _tile_loadd(6, p + 2 * kSteps * kTile + st * kTile, 64);
    const uint16_t* vt = v + st * kTile;  // dim group e at + e * kSteps * kTile
    LOWBIT_FIVE_PRODUCTS(0, vt, v_piece);
    if constexpr (NE > 1) LOWBIT_FIVE_PRODUCTS(1, vt + kSteps * kTile, v_piece);
    if constexpr (NE > 2) LOWBIT_FIVE_PRODUCTS(2, vt + 2 * kSteps * kTile, v_piece);
    if constexpr (NE > 3) LOWBIT_FIVE_PRODUCTS(3, vt + 3 * kSteps * kTile, v_piece);
  }
  _tile_stored(0, out, 64);
  if constexpr (NE > 1) _tile_stored(1, out + 256, 64);
  if constexpr (NE > 2) _tile_stored(2, out + 512, 64);
  if constexpr (NE > 3) _tile_stored(3, out + 768, 64);
}

[[gnu::flatten]] void attend_block_f16_amx(const AttendBlock& b, const uint16_t* k, const uint16_t* v, float* scratch) {
  const int64_t rows = b.tokens * b.heads, Dh = b.head_dim;
  const Layout lay(rows, Dh);
  const int64_t R = lay.R, Dp = lay.Dp, Dv = lay.Dv, steps = Dp / 32, groups = Dv / 16;
  float* base = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch) + 63) & ~uintptr_t{63});
  uint16_t* qt = reinterpret_cast<uint16_t*>(base + lay.q);
  float* ot = base + lay.out;
  float* m = base + lay.m;
  float* l = base + lay.l;
  int32_t* limit = reinterpret_cast<int32_t*>(base + lay.limit);
  float* st = base + lay.s;
  uint16_t* pt = reinterpret_cast<uint16_t*>(base + lay.p);
  uint16_t* ka = reinterpret_cast<uint16_t*>(base + lay.k);
  uint16_t* va = reinterpret_cast<uint16_t*>(base + lay.v);
  const int64_t q_piece = (R / 16) * steps * kTile, k_piece = kGroups * steps * kTile, v_piece = groups * kSteps * kTile;

  // Rows past `rows` pad the last row tile: zero queries, no positions, never written out.
  int64_t n_pos = 0;
  for (int64_t r = 0; r < R; ++r) {
    limit[r] = r < rows ? static_cast<int32_t>(b.positions[r / b.heads] + 1) : 0;
    n_pos = std::max<int64_t>(n_pos, limit[r]);
    m[r] = -INFINITY;
    l[r] = 0.0f;
  }
  std::memset(ot, 0, static_cast<size_t>(Dv * R) * sizeof(float));
  // Q^T: each row's three pieces of a 32-dim step as 16 dim pairs, a row tile transposed at a time.
  for (int64_t r0 = 0; r0 < R; r0 += 16) {
    for (int64_t s = 0; s < steps; ++s) {
      __m512 piece[3][16];
      for (int i = 0; i < 16; ++i) {
        const int64_t r = r0 + i, d = 32 * s, n = r < rows ? Dh - d : 0;
        const float* qr = b.q + r / b.heads * b.q_stride + r % b.heads * Dh + d;
        __m512i pieces[3];
        pieces_of_32(load_or_zero(qr, n), load_or_zero(qr + 16, n - 16), pieces);
        for (int c = 0; c < 3; ++c) piece[c][i] = _mm512_castsi512_ps(pieces[c]);
      }
      for (int c = 0; c < 3; ++c) {
        S::transpose(piece[c]);
        uint16_t* tile = qt + c * q_piece + (r0 / 16 * steps + s) * kTile;
        for (int i = 0; i < 16; ++i) _mm512_storeu_ps(tile + 32 * i, piece[c][i]);
      }
    }
  }

  const AmxTileConfig config = amx_tiles_16x64();
  _tile_loadconfig(&config);
  for (int64_t j0 = 0; j0 < n_pos; j0 += C) {
    const int64_t chunk = std::min(C, n_pos - j0);
    const int64_t at = j0 / b.kv_block_rows * b.kv_block_stride + j0 % b.kv_block_rows * b.kv_stride;
    // K a row per position: hi and lo pieces of each 32-dim step, each
    // 16-position group's 32 dims two 16 x 16 transposes of its slab (the
    // chunk starts a slab; key_slab_offset), positions past the chunk zero.
    for (int g = 0; g < kGroups; ++g) {
      const uint16_t* slab = k + at + key_slab_offset(16 * g, 0, b.kv_stride);  // the group's first position
      for (int64_t s = 0; s < steps; ++s) {
        __m512 t[2][16];
        for (int h = 0; h < 2; ++h) {
          for (int e = 0; e < 16; ++e) {
            const int64_t d = 32 * s + 16 * h + e;
            t[h][e] = load_or_zero(slab + d * kKeySlab, d < Dh && 16 * g < chunk ? 16 : 0);
          }
          S::transpose(t[h]);
        }
        uint16_t* tile = ka + (g * steps + s) * kTile;
        for (int i = 0; i < 16; ++i) {
          const bool real = 16 * g + i < chunk;
          store_f16_pieces(real ? t[0][i] : _mm512_setzero_ps(), real ? t[1][i] : _mm512_setzero_ps(), tile + 32 * i,
                           k_piece);
        }
      }
    }
    // V^T: per 16-dim group and 32-position step, two 16 x 16 transposes.
    for (int64_t e = 0; e < groups; ++e) {
      for (int s = 0; s < kSteps; ++s) {
        __m512 t[2][16];
        for (int h = 0; h < 2; ++h) {
          for (int i = 0; i < 16; ++i) {
            const int64_t j = 32 * s + 16 * h + i, d = 16 * e;
            t[h][i] = load_or_zero(v + at + j * b.kv_stride + d, j < chunk ? Dh - d : 0);
          }
          S::transpose(t[h]);
        }
        uint16_t* tile = va + (e * kSteps + s) * kTile;
        for (int i = 0; i < 16; ++i) store_f16_pieces(t[0][i], t[1][i], tile + 32 * i, v_piece);
      }
    }

    // The row tiles with positions in this chunk, and how many of its positions each takes.
    int64_t tiles[kAttendBlockRows / 16], tile_nj[kAttendBlockRows / 16], n_tiles = 0;
    for (int64_t r0 = 0; r0 < R; r0 += 16) {
      int32_t last = 0;
      for (int64_t r = r0; r < r0 + 16; ++r) last = std::max(last, limit[r]);
      if (last <= j0) continue;
      tiles[n_tiles] = r0;
      tile_nj[n_tiles++] = std::min<int64_t>(chunk, last - j0);
    }
    if (n_tiles == 0) continue;
    float* s_now = st;           // the S^T the softmax reads
    float* s_next = st + C * 16;  // the one the score blocks of the next row tile fill
    ScoreBlocks scores(ka, k_piece, q_piece, steps);
    scores.start(qt + tiles[0] / 16 * steps * kTile, (tile_nj[0] + 15) / 16);
    scores.finish(s_now);
    for (int64_t ti = 0; ti < n_tiles; ++ti) {
      const int64_t r0 = tiles[ti], nj = tile_nj[ti], ng = (nj + 15) / 16, ns = (nj + 31) / 32;
      const bool more = ti + 1 < n_tiles;
      // The online softmax over the chunk, 16 rows in the lanes: scale, mask
      // each row past its last position, new max, weights, sums.
      const __m512i lim = _mm512_loadu_si512(limit + r0);
      __mmask16 valid[C];
      const __m512 old = S::load(m + r0);
      __m512 mx = old;
      for (int64_t j = 0; j < ng * 16; ++j) {
        valid[j] = _mm512_cmplt_epi32_mask(_mm512_set1_epi32(static_cast<int32_t>(j0 + j)), lim);
        const __m512 x = _mm512_mask_mul_ps(S::set1(-INFINITY), valid[j], S::load(s_now + 16 * j), S::set1(b.scale));
        S::store(s_now + 16 * j, x);
        mx = S::max(mx, x);
      }
      // A row with no position yet subtracts 0, not -inf; its factor is 0 (out^T and l are 0).
      const __mmask16 seen = _mm512_cmp_ps_mask(mx, S::set1(-INFINITY), _CMP_NEQ_OQ);
      const __m512 shift = _mm512_maskz_mov_ps(seen, mx);
      const __mmask16 had = _mm512_cmp_ps_mask(old, S::set1(-INFINITY), _CMP_NEQ_OQ);
      const __m512 factor = _mm512_maskz_mov_ps(had, simd::exp<S>(S::sub(old, shift)));
      S::store(m + r0, mx);
      __m512 sum = S::zero();
      if (more) scores.start(qt + tiles[ti + 1] / 16 * steps * kTile, (tile_nj[ti + 1] + 15) / 16);
      const int64_t pairs = ns * 16;
      for (int64_t j = 0; j < ns * 32; j += 2) {
        if (more) scores.issue_until((j / 2 + 1) * scores.blocks() / pairs);
        __m512 w[2];
        for (int h = 0; h < 2; ++h)
          w[h] = j + h < ng * 16
                     ? _mm512_maskz_mov_ps(valid[j + h], simd::exp<S>(S::sub(S::load(s_now + 16 * (j + h)), shift)))
                     : S::zero();
        sum = S::add(sum, S::add(w[0], w[1]));
        uint16_t* row = pt + (j / 32) * kTile + (j % 32) / 2 * 32;
        __m512 p0[3], p1[3];
        cut_bf16(w[0], p0);
        cut_bf16(w[1], p1);
        for (int c = 0; c < 3; ++c) _mm512_storeu_si512(row + c * kSteps * kTile, pair_bf16(p0[c], p1[c]));
      }
      if (more) scores.finish(s_next);
      std::swap(s_now, s_next);
      S::store(l + r0, S::fmadd(S::load(l + r0), factor, sum));
      float* o = ot + r0 * Dv;  // this row tile's out^T
      if (_mm512_cmp_ps_mask(factor, S::set1(1.0f), _CMP_NEQ_UQ) != 0)
        for (int64_t d = 0; d < Dv; ++d) S::store(o + 16 * d, S::mul(S::load(o + 16 * d), factor));

      for (int64_t e = 0; e < groups; e += 4) {
        const uint16_t* ve = va + e * kSteps * kTile;
        switch (std::min<int64_t>(4, groups - e)) {
          case 1: weigh_tiles<1>(pt, ve, v_piece, ns, o + 256 * e); break;
          case 2: weigh_tiles<2>(pt, ve, v_piece, ns, o + 256 * e); break;
          case 3: weigh_tiles<3>(pt, ve, v_piece, ns, o + 256 * e); break;
          default: weigh_tiles<4>(pt, ve, v_piece, ns, o + 256 * e); break;
        }
      }
    }
  }
  _tile_release();

  // out = out^T transposed back, a 16 x 16 tile at a time, over l.
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    for (int64_t d0 = 0; d0 < Dh; d0 += 16) {
      const int64_t nd = std::min<int64_t>(16, Dh - d0);
      __m512 t[16];
      for (int i = 0; i < 16; ++i) t[i] = S::load(ot + r0 * Dv + 16 * (d0 + i));  // rows d0 + i < Dv
      S::transpose(t);
      for (int64_t i = 0; i < std::min<int64_t>(16, rows - r0); ++i) {
        float* dst = b.out + (r0 + i) / b.heads * b.out_stride + (r0 + i) % b.heads * Dh + d0;
        simd::store_n<S>(dst, S::mul(t[i], S::set1(1.0f / l[r0 + i])), nd);
      }
    }
  }
}

}  // namespace

#undef LOWBIT_FIVE_PRODUCTS

int64_t attend_block_amx_scratch(int64_t head_dim) { return Layout(kAttendBlockRows, head_dim).end + 16; }

const VectorOps& vector_ops_avx512_amx() {
  static const VectorOps ops = [] {
    VectorOps o = vector_ops_avx512();
    o.isa = "avx512_amx";
    o.attend_block_f16 = attend_block_f16_amx;
    return o;
  }();
  return ops;
}

}  // namespace lowbit
