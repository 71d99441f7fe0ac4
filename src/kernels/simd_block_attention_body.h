// VectorOps::attend_block_f16/f32 over a lane type S: the causal attention of
// a block of query rows (many tokens of one sequence, the query heads of one
// KV head), as prefill evaluates them.
//
// attend_group (simd_ops_body.h) puts a head's dims in the lanes, so every
// score ends in a horizontal sum. Here the rows go in the lanes and the
// position or dim is broadcast, so every step is one FMA per kLanes rows:
//   scores^T[j][r] = scale * sum_d Q^T[d][r] * k_j[d]
//   out^T[d][r]   += sum_j  P^T[j][r] * v_j[d]
// and a k_j or v_j element, loaded once, serves up to kAttendBlockRows rows.
// Positions go in chunks of kAttendBlockChunk with an online softmax: per row
// a running max m and sum l, the partial out^T scaled by exp(m_old - m) when a
// chunk raises the max, and divided by l at the end.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/simd_broadcast_products.h"
#include "kernels/simd_lanes.h"
#include "kernels/vector_ops.h"

namespace lowbit::simd {

namespace block_attention {

// Positions (scores) or dims (values) per step, each with kRV vectors of rows:
// 24 accumulators with 512-bit vectors (32 registers), 8 with 256-bit ones
// (16 registers); then steps of 4 and of 1 for the rest.
template <class S>
inline constexpr int kBroadcasts = S::kLanes == 16 ? 12 : 4;
inline constexpr int kRV = 2;  // row vectors per step

// pt[jj * R + lanes] = scale * sum_d qt[d * R + lanes] * k[jj * k_pos + d * k_d],
// for kJ positions jj and the kRV row vectors at qt / pt.
template <class S, int kJ>
inline void score_rows(const float* qt, int64_t R, const float* k, int64_t k_pos, int64_t k_d, int64_t head_dim,
                       float scale, float* pt) {
  using V = typename S::V;
  V acc[kJ][kRV];
  #pragma GCC unroll 16
  for (int jj = 0; jj < kJ; ++jj)
    #pragma GCC unroll 2
    for (int r = 0; r < kRV; ++r) acc[jj][r] = S::zero();
  panel_products<S, kJ, kRV>(qt, R, S::kLanes, head_dim, k, k_pos, k_d, acc);
  const V vs = S::set1(scale);
  #pragma GCC unroll 16
  for (int jj = 0; jj < kJ; ++jj)
    #pragma GCC unroll 2
    for (int r = 0; r < kRV; ++r) S::store(pt + jj * R + r * S::kLanes, S::mul(acc[jj][r], vs));
}

// ot[dd * R + lanes] = ot[..] * factor + sum_j pt[j * R + lanes] * v[j * vs + dd]
// for kD dims dd and the kRV row vectors at pt / ot, over nj positions
// (factor == nullptr: ot is not read, as if 0, for the first chunk).
template <class S, int kD>
inline void weigh_rows(const float* pt, int64_t R, int64_t nj, const float* v, int64_t vs,
                       const typename S::V* factor, float* ot) {
  using V = typename S::V;
  V acc[kD][kRV];
  #pragma GCC unroll 16
  for (int dd = 0; dd < kD; ++dd)
    #pragma GCC unroll 2
    for (int r = 0; r < kRV; ++r)
      acc[dd][r] = factor != nullptr ? S::mul(S::load(ot + dd * R + r * S::kLanes), factor[r]) : S::zero();
  panel_products<S, kD, kRV>(pt, R, S::kLanes, nj, v, 1, vs, acc);
  #pragma GCC unroll 16
  for (int dd = 0; dd < kD; ++dd)
    #pragma GCC unroll 2
    for (int r = 0; r < kRV; ++r) S::store(ot + dd * R + r * S::kLanes, acc[dd][r]);
}

}  // namespace block_attention

template <class S, class T>
void attend_block(const AttendBlock& b, const T* k, const T* v, float* scratch) {
  using namespace block_attention;
  using V = typename S::V;
  constexpr int64_t P = int64_t{kRV} * S::kLanes;  // rows per panel (a step's rows)
  constexpr int kB = kBroadcasts<S>;
  const int64_t rows = b.tokens * b.heads, Dh = b.head_dim, C = kAttendBlockChunk;
  const int64_t R = (rows + P - 1) / P * P;  // <= kAttendBlockRows: P divides it
  // Panels of P rows, each contiguous so that a step streams through its own.
  float* qt = scratch;      // [R / P][Dh][P] Q^T
  float* ot = qt + R * Dh;  // [R / P][Dh][P] out^T
  float* pt = ot + R * Dh;  // [C][P] one panel's scores, then weights
  float* m = pt + C * P;    // [R] running max, -inf before any position
  float* l = m + R;         // [R] running sum
  float* kc = l + R;        // [Dh][C] a chunk of k in f32, d-major as its slabs
  float* vc = kc + C * Dh;  // [C][Dh]

  // Rows past `rows` pad the last panel: zero queries, never masked, never written out.
  int64_t limit[kAttendBlockRows];
  int64_t n_pos = 0;
  for (int64_t r = 0; r < R; ++r) {
    limit[r] = r < rows ? b.positions[r / b.heads] + 1 : 0;
    n_pos = std::max(n_pos, limit[r]);
    m[r] = -INFINITY;
    l[r] = 0.0f;
  }
  const auto row = [&](auto* base, int64_t stride, int64_t r) { return base + r / b.heads * stride + r % b.heads * Dh; };
  // Q^T a kLanes x kLanes tile at a time.
  for (int64_t r0 = 0; r0 < R; r0 += S::kLanes) {
    for (int64_t d0 = 0; d0 < Dh; d0 += S::kLanes) {
      const int64_t nd = std::min<int64_t>(S::kLanes, Dh - d0);
      V t[S::kLanes];
      #pragma GCC unroll 16
      for (int i = 0; i < S::kLanes; ++i) t[i] = r0 + i < rows ? load_n<S>(row(b.q, b.q_stride, r0 + i) + d0, nd) : S::zero();
      S::transpose(t);
      float* dst = qt + r0 / P * Dh * P + r0 % P;
      for (int64_t i = 0; i < nd; ++i) S::store(dst + (d0 + i) * P, t[i]);
    }
  }

  for (int64_t j0 = 0; j0 < n_pos; j0 += C) {
    const int64_t chunk = std::min(C, n_pos - j0);
    // The chunk lies in one block of the cache (its rows a multiple of C).
    const int64_t at = j0 / b.kv_block_rows * b.kv_block_stride + j0 % b.kv_block_rows * b.kv_stride;
    const float *kj, *vj;
    int64_t k_pos, k_d, vs;  // k's strides between positions and dims, v's between positions
    if constexpr (std::is_same_v<T, uint16_t>) {
      for (int64_t j = 0; j < chunk; ++j) {
        const uint16_t* vr = v + at + j * b.kv_stride;
        for_lanes<S>(Dh, [&](int64_t d, int64_t n) { store_n<S>(vc + j * Dh + d, load_n<S>(vr + d, n), n); });
      }
      // k's slabs (whole ones: the chunk starts a slab) side by side, each
      // dim's positions a row of kc: the scores broadcast k along a row.
      static_assert(C % kKeySlab == 0 && kKeySlab % S::kLanes == 0);
      for (int64_t s0 = 0; s0 < chunk; s0 += kKeySlab) {
        const uint16_t* slab = k + at + s0 * b.kv_stride;
        for (int64_t d = 0; d < Dh; ++d)
          #pragma GCC unroll 8
          for (int64_t i = 0; i < kKeySlab; i += S::kLanes)
            store_n<S>(kc + d * C + s0 + i, load_n<S>(slab + d * kKeySlab + i, S::kLanes), S::kLanes);
      }
      kj = kc, k_pos = 1, k_d = C;
      vj = vc, vs = Dh;
    } else {
      kj = k + at, k_pos = b.kv_stride, k_d = 1;
      vj = v + at, vs = b.kv_stride;
    }
    for (int64_t r0 = 0; r0 < R; r0 += P) {
      // The panel's real rows: skipped when all of them end before j0, taking
      // the chunk's positions up to the last any of them attends to (nj of
      // them below), masked where some end sooner.
      int64_t lo = INT64_MAX, hi = 0;
      for (int64_t r = r0; r < std::min(r0 + P, rows); ++r) lo = std::min(lo, limit[r]), hi = std::max(hi, limit[r]);
      if (hi <= j0) continue;
      const int64_t nj = std::min(chunk, hi - j0);
      const bool masked = lo < j0 + nj;
      const auto mask = [&](float value) {
        for (int64_t r = r0; r < std::min(r0 + P, rows); ++r)
          for (int64_t j = std::max(limit[r], j0) - j0; j < nj; ++j) pt[j * P + r - r0] = value;
      };
      const float* qp = qt + r0 * Dh;
      float* op = ot + r0 * Dh;

      int64_t j = 0;
      for (; j + kB <= nj; j += kB) score_rows<S, kB>(qp, P, kj + j * k_pos, k_pos, k_d, Dh, b.scale, pt + j * P);
      for (; j + 4 <= nj; j += 4) score_rows<S, 4>(qp, P, kj + j * k_pos, k_pos, k_d, Dh, b.scale, pt + j * P);
      for (; j < nj; ++j) score_rows<S, 1>(qp, P, kj + j * k_pos, k_pos, k_d, Dh, b.scale, pt + j * P);
      if (masked) mask(-INFINITY);

      // New max; a row with none yet (all masked so far) subtracts 0 instead of -inf.
      V mx[kRV], shift[kRV], factor[kRV], sum[kRV];
      for (int r = 0; r < kRV; ++r) mx[r] = S::load(m + r0 + r * S::kLanes);
      for (int64_t jj = 0; jj < nj; ++jj)
        for (int r = 0; r < kRV; ++r) mx[r] = S::max(mx[r], S::load(pt + jj * P + r * S::kLanes));
      float used[P];
      for (int r = 0; r < kRV; ++r) S::store(used + r * S::kLanes, mx[r]);
      for (float& u : used) u = u == -INFINITY ? 0.0f : u;
      for (int r = 0; r < kRV; ++r) {
        shift[r] = S::load(used + r * S::kLanes);
        factor[r] = exp<S>(S::sub(S::load(m + r0 + r * S::kLanes), shift[r]));  // 0 (~1e-38) while m = -inf
        S::store(m + r0 + r * S::kLanes, mx[r]);
        sum[r] = S::zero();
      }
      for (int64_t jj = 0; jj < nj; ++jj)
        for (int r = 0; r < kRV; ++r) {
          float* p = pt + jj * P + r * S::kLanes;
          S::store(p, exp<S>(S::sub(S::load(p), shift[r])));
        }
      if (masked) mask(0.0f);  // exp clamps its input: exp(-inf) would be ~1e-38
      for (int64_t jj = 0; jj < nj; ++jj)
        for (int r = 0; r < kRV; ++r) sum[r] = S::add(sum[r], S::load(pt + jj * P + r * S::kLanes));
      for (int r = 0; r < kRV; ++r) {
        float* lr = l + r0 + r * S::kLanes;
        S::store(lr, S::fmadd(S::load(lr), factor[r], sum[r]));
      }

      // Every panel takes the first chunk (its rows attend to position 0), which starts out^T.
      const V* scale_out = j0 == 0 ? nullptr : factor;
      int64_t d = 0;
      for (; d + kB <= Dh; d += kB) weigh_rows<S, kB>(pt, P, nj, vj + d, vs, scale_out, op + d * P);
      for (; d + 4 <= Dh; d += 4) weigh_rows<S, 4>(pt, P, nj, vj + d, vs, scale_out, op + d * P);
      for (; d < Dh; ++d) weigh_rows<S, 1>(pt, P, nj, vj + d, vs, scale_out, op + d * P);
    }
  }

  // out = out^T transposed back, a tile at a time, over l.
  for (int64_t r0 = 0; r0 < rows; r0 += S::kLanes) {
    const float* src = ot + r0 / P * Dh * P + r0 % P;
    for (int64_t d0 = 0; d0 < Dh; d0 += S::kLanes) {
      const int64_t nd = std::min<int64_t>(S::kLanes, Dh - d0);
      V t[S::kLanes];
      #pragma GCC unroll 16
      for (int i = 0; i < S::kLanes; ++i) t[i] = i < nd ? S::load(src + (d0 + i) * P) : S::zero();
      S::transpose(t);
      for (int64_t i = 0; i < std::min<int64_t>(S::kLanes, rows - r0); ++i)
        store_n<S>(row(b.out, b.out_stride, r0 + i) + d0, S::mul(t[i], S::set1(1.0f / l[r0 + i])), nd);
    }
  }
}

}  // namespace lowbit::simd
