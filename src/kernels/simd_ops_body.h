// The bodies of VectorOps (vector_ops.h), written once over a lane type S
// (x86_avx2/simd_avx2.h, x86_avx512/simd_avx512.h) and instantiated by each
// ISA's file. Every loop takes whole vectors, then one partial vector.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels/simd_block_attention_body.h"
#include "kernels/simd_lanes.h"
#include "kernels/vector_ops.h"

namespace lowbit::simd {

template <class S>
void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  typename S::V ss[2] = {S::zero(), S::zero()};
  int64_t i = 0;
  for (; i + 2 * S::kLanes <= n; i += 2 * S::kLanes) {
    const auto a = S::load(x + i), b = S::load(x + i + S::kLanes);
    ss[0] = S::fmadd(a, a, ss[0]);
    ss[1] = S::fmadd(b, b, ss[1]);
  }
  for_lanes<S>(n - i, [&](int64_t j, int64_t m) {
    const auto a = load_n<S>(x + i + j, m);
    ss[0] = S::fmadd(a, a, ss[0]);
  });
  const double sum = S::reduce_add(S::add(ss[0], ss[1]));
  const auto scale = S::set1(static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(n) + eps)));
  for_lanes<S>(n, [&](int64_t j, int64_t m) {
    store_n<S>(out + j, S::mul(load_n<S>(weight + j, m), S::mul(load_n<S>(x + j, m), scale)), m);
  });
}

template <class S>
void rope_rotate(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin,
                 bool interleaved) {
  const int64_t half = n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    if (interleaved) {
      // Pairs are adjacent: cheap enough in scalar next to the matmuls.
      for (int64_t i = 0; i < half; ++i) {
        const float v0 = v[2 * i], v1 = v[2 * i + 1];
        v[2 * i] = v0 * cos[i] - v1 * sin[i];
        v[2 * i + 1] = v0 * sin[i] + v1 * cos[i];
      }
      continue;
    }
    for_lanes<S>(half, [&](int64_t i, int64_t m) {
      const auto a = load_n<S>(v + i, m), b = load_n<S>(v + half + i, m);
      const auto c = load_n<S>(cos + i, m), s = load_n<S>(sin + i, m);
      store_n<S>(v + i, S::sub(S::mul(a, c), S::mul(b, s)), m);
      store_n<S>(v + half + i, S::add(S::mul(a, s), S::mul(b, c)), m);
    });
  }
}

// x[i] = exp(x[i] - max) in place with max the largest of `floor` and the
// x[i]; returns {max, sum of the new x} ({floor, 0} when n = 0): softmax before
// its normalization.
template <class S>
std::pair<float, float> exp_shifted(float* x, int64_t n, float floor = -INFINITY) {
  auto vmax = S::set1(floor);
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) vmax = S::max(vmax, S::load(x + i));
  float max = S::reduce_max(vmax);
  for (; i < n; ++i) max = std::fmax(max, x[i]);
  const auto vm = S::set1(max);
  auto sum = S::zero();
  for_lanes<S>(n, [&](int64_t j, int64_t m) {
    const auto e = exp<S>(S::sub(load_n<S>(x + j, m), vm));
    store_n<S>(x + j, e, m);
    sum = S::add(sum, m == S::kLanes ? e : load_n<S>(x + j, m));  // reloaded: lanes past n read 0
  });
  return {max, S::reduce_add(sum)};
}

// log sum_i exp(x[i]) as max + log sum_i exp(x[i] - max), each exp in float
// (exp<S>, ~1 ulp), each vector of them widened and summed in double.
template <class S>
double log_sum_exp(const float* x, int64_t n) {
  auto m0 = S::set1(-INFINITY), m1 = m0;
  int64_t i = 0;
  for (; i + 2 * S::kLanes <= n; i += 2 * S::kLanes) {
    m0 = S::max(m0, S::load(x + i));
    m1 = S::max(m1, S::load(x + i + S::kLanes));
  }
  float max = S::reduce_max(S::max(m0, m1));
  for (; i < n; ++i) max = std::fmax(max, x[i]);
  const auto vm = S::set1(max);
  double s0 = 0, s1 = 0;  // two chains: a double add's latency per vector otherwise
  i = 0;
  for (; i + 2 * S::kLanes <= n; i += 2 * S::kLanes) {
    s0 += S::reduce_add_f64(exp<S>(S::sub(S::load(x + i), vm)));
    s1 += S::reduce_add_f64(exp<S>(S::sub(S::load(x + i + S::kLanes), vm)));
  }
  for_lanes<S>(n - i, [&](int64_t j, int64_t m) {
    float e[S::kLanes] = {};  // lanes past n stay 0
    store_n<S>(e, exp<S>(S::sub(load_n<S>(x + i + j, m), vm)), m);
    s0 += S::reduce_add_f64(S::load(e));
  });
  return static_cast<double>(max) + std::log(s0 + s1);
}

template <class S>
void softmax(float* x, int64_t n) {
  const auto inv = S::set1(static_cast<float>(1.0 / static_cast<double>(exp_shifted<S>(x, n).second)));
  for_lanes<S>(n, [&](int64_t j, int64_t m) { store_n<S>(x + j, S::mul(load_n<S>(x + j, m), inv), m); });
}

template <class S>
void silu_gate(float* gate, const float* up, int64_t n) {
  const auto one = S::set1(1.0f);
  for_lanes<S>(n, [&](int64_t i, int64_t m) {
    const auto g = load_n<S>(gate + i, m);
    const auto silu = S::div(g, S::add(one, exp<S>(S::sub(S::zero(), g))));
    store_n<S>(gate + i, S::mul(silu, load_n<S>(up + i, m)), m);
  });
}

template <class S>
void relu2_gate(float* gate, const float* up, int64_t n) {
  for_lanes<S>(n, [&](int64_t i, int64_t m) {
    const auto r = S::max(load_n<S>(gate + i, m), S::zero());
    store_n<S>(gate + i, S::mul(S::mul(r, r), load_n<S>(up + i, m)), m);
  });
}

template <class S>
void add(float* y, const float* x, int64_t n) {
  for_lanes<S>(n, [&](int64_t i, int64_t m) { store_n<S>(y + i, S::add(load_n<S>(y + i, m), load_n<S>(x + i, m)), m); });
}

template <class S>
void scale(float* y, int64_t n, float s) {
  const auto vs = S::set1(s);
  for_lanes<S>(n, [&](int64_t i, int64_t m) { store_n<S>(y + i, S::mul(load_n<S>(y + i, m), vs), m); });
}

template <class S>
void to_f16(const float* x, uint16_t* y, int64_t n) {
  for_lanes<S>(n, [&](int64_t i, int64_t m) {
    if (m == S::kLanes) {
      S::store_f16(y + i, S::load(x + i));
    } else {
      S::store_f16_partial(y + i, S::load_partial(x + i, m), m);
    }
  });
}

// Decode attention streams a KV head's cached rows from memory once per
// token. Each k and v row is prefetched kAttendAhead positions ahead, one
// line at a time as score_keys reads the same line of the current rows:
// prefetches issued a row at a time (four rows, 16 lines, in one burst) left
// memory and compute taking turns, the time their sum (docs/performance.md,
// "Session 28"). 16 / 32 / 64 positions ahead made no clear difference.
inline constexpr int64_t kAttendAhead = 32;
// Positions per step of attend_heads' online softmax: the chunk's v rows are
// read from L1 by each pass over the head dimensions.
inline constexpr int64_t kAttendChunk = 64;

// scores[h * p_stride + j + i] = scale * q_h . k_(j+i) for kHeads heads and
// kPos positions: every k row loaded (and converted) once, each q vector once
// for the kPos rows, kHeads x kPos independent FMA chains (4 positions at a
// time over 1 took attention in L2 from 0.066 ms to 0.038). Prefetches line l
// of k and v rows j + i + kAttendAhead while reading line l of rows j + i.
template <class S, class T, int kHeads, int kPos>
void score_keys(const float* q, const T* k, const T* v, int64_t stride, int64_t j, int64_t p_stride,
                int64_t head_dim, float scale, float* scores) {
  using V = typename S::V;
  constexpr int64_t kLine = 64 / static_cast<int64_t>(sizeof(T));  // elements per cache line
  static_assert(kLine % S::kLanes == 0);
  V acc[kPos][kHeads];
  #pragma GCC unroll 4
  for (auto& pos_acc : acc)
    #pragma GCC unroll 8
    for (auto& a : pos_acc) a = S::zero();
  const T* kj = k + j * stride;
  const T* vj = v + j * stride;
  const auto step = [&](int64_t d, int64_t m) {
    V kv[kPos];
    #pragma GCC unroll 4
    for (int i = 0; i < kPos; ++i) kv[i] = load_n<S>(kj + i * stride + d, m);
    #pragma GCC unroll 8
    for (int h = 0; h < kHeads; ++h) {
      const V qv = load_n<S>(q + h * head_dim + d, m);
      #pragma GCC unroll 4
      for (int i = 0; i < kPos; ++i) acc[i][h] = S::fmadd(qv, kv[i], acc[i][h]);
    }
  };
  for (int64_t d = 0; d < head_dim; d += kLine) {
    // Written out here: GCC 12 deleted calls of a helper (or lambda) that
    // did nothing but prefetch, having found it free of side effects.
    #pragma GCC unroll 4
    for (int i = 0; i < kPos; ++i) {
      __builtin_prefetch(kj + (kAttendAhead + i) * stride + d, 0, 3);
      __builtin_prefetch(vj + (kAttendAhead + i) * stride + d, 0, 3);
    }
    if (d + kLine <= head_dim) {
      #pragma GCC unroll 16
      for (int64_t e = 0; e < kLine; e += S::kLanes) step(d + e, S::kLanes);
    } else {
      for_lanes<S>(head_dim - d, [&](int64_t e, int64_t m) { step(d + e, m); });
    }
  }
  #pragma GCC unroll 4
  for (int i = 0; i < kPos; ++i) {
    if constexpr (kHeads % 4 == 0) {
      #pragma GCC unroll 4
      for (int h = 0; h < kHeads; h += 4) {
        float sum[4];
        S::reduce_add4(acc[i][h], acc[i][h + 1], acc[i][h + 2], acc[i][h + 3], sum);
        #pragma GCC unroll 4
        for (int e = 0; e < 4; ++e) scores[(h + e) * p_stride + j + i] = sum[e] * scale;
      }
    } else {
      #pragma GCC unroll 8
      for (int h = 0; h < kHeads; ++h) scores[h * p_stride + j + i] = S::reduce_add(acc[i][h]) * scale;
    }
  }
}

// Scores of kHeads heads against one slab of an f16 k (kKeySlab positions,
// d-major: key_slab_offset): scores[h * p_stride + at + i] = scale * q_h . k_i
// for the slab's positions i in [lo, hi). The positions go in the lanes and
// q_h's element d is broadcast, so each step is one FMA per lanes of
// positions and head, with no horizontal sum at the end; kHeads x kPass
// independent chains. Positions of the slab outside [lo, hi) are computed
// and dropped (the slab is always whole in memory). Each step d prefetches
// line d of the next slab (k_ahead) and of the v rows this slab's positions
// will read (v_ahead): one 64-byte line each, kKeySlab f16 elements.
template <class S, int kHeads>
void score_slab(const float* q, const uint16_t* slab, int64_t head_dim, float scale, int64_t lo, int64_t hi,
                float* scores, int64_t p_stride, int64_t at, const uint16_t* k_ahead, const uint16_t* v_ahead) {
  using V = typename S::V;
  static_assert(kKeySlab * sizeof(uint16_t) == 64, "a slab's row is one cache line");
  constexpr int kVecs = static_cast<int>(kKeySlab) / S::kLanes;  // vectors of positions per slab
  constexpr int kMaxAcc = S::kLanes == 16 ? 16 : 8;              // accumulators (32 / 16 registers)
  constexpr int kPass = std::clamp(kMaxAcc / kHeads, 1, kVecs);  // vectors of positions per pass
  static_assert(kVecs % kPass == 0);
  const bool whole = lo == 0 && hi == kKeySlab;
  alignas(64) float some[kHeads][kKeySlab];  // a partial slab's scores, before the copy
  const V vs = S::set1(scale);
  for (int p0 = 0; p0 < kVecs; p0 += kPass) {
    V acc[kHeads][kPass];
    #pragma GCC unroll 8
    for (int h = 0; h < kHeads; ++h)
      #pragma GCC unroll 8
      for (int a = 0; a < kPass; ++a) acc[h][a] = S::zero();
    const uint16_t* kp = slab + p0 * S::kLanes;
    #pragma GCC unroll 4
    for (int64_t d = 0; d < head_dim; ++d) {
      if (p0 == 0) {
        __builtin_prefetch(k_ahead + d * kKeySlab, 0, 3);
        __builtin_prefetch(v_ahead + d * kKeySlab, 0, 3);
      }
      V kv[kPass];
      #pragma GCC unroll 8
      for (int a = 0; a < kPass; ++a) kv[a] = load_n<S>(kp + d * kKeySlab + a * S::kLanes, S::kLanes);
      #pragma GCC unroll 8
      for (int h = 0; h < kHeads; ++h) {
        const V qd = S::set1(q[h * head_dim + d]);
        #pragma GCC unroll 8
        for (int a = 0; a < kPass; ++a) acc[h][a] = S::fmadd(qd, kv[a], acc[h][a]);
      }
    }
    #pragma GCC unroll 8
    for (int h = 0; h < kHeads; ++h) {
      #pragma GCC unroll 8
      for (int a = 0; a < kPass; ++a) {
        const int64_t i = (p0 + a) * S::kLanes;
        if (whole) {
          store_n<S>(scores + h * p_stride + at + i, S::mul(acc[h][a], vs), S::kLanes);
        } else {
          S::store(some[h] + i, S::mul(acc[h][a], vs));
        }
      }
    }
  }
  if (!whole) {
    for (int h = 0; h < kHeads; ++h)
      for (int64_t i = lo; i < hi; ++i) scores[h * p_stride + at + i] = some[h][i];
  }
}

// out[h][0 .. dims) = alpha[h] out[h][0 .. dims) + sum over j of
// p[h * p_stride + j] v_j[0 .. dims) for kHeads heads (alpha == nullptr: out
// starts at 0), the kHeads x kVec accumulators in registers. kFull: dims = kVec
// vectors exactly, so nothing in the loop depends on dims at run time (with
// run-time counts GCC kept the accumulators on the stack and tested each per
// position).
template <class S, class T, int kHeads, int kVec, bool kFull>
void weigh_values(const float* p, int64_t p_stride, const T* v, int64_t stride, int64_t n_pos, int64_t head_dim,
                  int64_t dims, const float* alpha, float* out) {
  using V = typename S::V;
  const auto lanes = [&](int a) {
    return kFull ? int64_t{S::kLanes} : std::clamp<int64_t>(dims - a * S::kLanes, 0, S::kLanes);
  };
  V acc[kHeads][kVec];
  #pragma GCC unroll 8
  for (int h = 0; h < kHeads; ++h) {
    const V w = S::set1(alpha != nullptr ? alpha[h] : 0.0f);
    #pragma GCC unroll 16
    for (int a = 0; a < kVec; ++a) {
      acc[h][a] = alpha != nullptr && lanes(a) > 0 ? S::mul(w, load_n<S>(out + h * head_dim + a * S::kLanes, lanes(a)))
                                                   : S::zero();
    }
  }
  for (int64_t j = 0; j < n_pos; ++j) {
    const T* vj = v + j * stride;
    V vv[kVec];
    #pragma GCC unroll 16
    for (int a = 0; a < kVec; ++a) {
      if constexpr (kFull) {
        vv[a] = load_n<S>(vj + a * S::kLanes, S::kLanes);
      } else {
        vv[a] = lanes(a) > 0 ? load_n<S>(vj + a * S::kLanes, lanes(a)) : S::zero();
      }
    }
    #pragma GCC unroll 8
    for (int h = 0; h < kHeads; ++h) {
      const V w = S::set1(p[h * p_stride + j]);
      #pragma GCC unroll 16
      for (int a = 0; a < kVec; ++a) acc[h][a] = S::fmadd(w, vv[a], acc[h][a]);
    }
  }
  #pragma GCC unroll 8
  for (int h = 0; h < kHeads; ++h)
    #pragma GCC unroll 16
    for (int a = 0; a < kVec; ++a)
      if (lanes(a) > 0) store_n<S>(out + h * head_dim + a * S::kLanes, acc[h][a], lanes(a));
}

// kHeads query heads of one KV head at a time (1 for plain multi-head
// attention): each k_j and v_j is loaded (and converted from f16) once for all
// of them, and the heads' dots are independent FMA chains. The positions go
// by in chunks of kAttendChunk with an online softmax (as attend_block's), so
// the k and v streams are read side by side at one steady pace. 4096 cold
// positions of the 2B-4T dummy at 1 thread: the two passes this replaced
// (all scores, then the values in half-rows) took 32-33 ms per token, this
// 24-25, and 22.6 in the decoder's order, against 21 for a plain read of the
// bytes (docs/performance.md, "Session 28").
//
// An f16 k is in slabs (key_slab_offset; k_skip positions of the first slab
// before the range): its scores come from score_slab, and the chunks end on
// every other slab's end, so that a slab is scored once (the first chunk is
// k_skip positions short). One token over 512-2048 cached positions of the
// 2B-4T shape in L2: 13.5-14 ns a position and KV head against 16-17.5 with k
// in rows (docs/performance.md, "Session 44").
template <class S, class T, int kHeads>
void attend_heads(const float* q, const T* k, int64_t k_skip, const T* v, int64_t stride, int64_t n_pos,
                  int64_t head_dim, float scale, float* scores, float* out, float* part) {
  constexpr bool kSlabs = std::is_same_v<T, uint16_t>;
  static_assert(kAttendChunk % kKeySlab == 0);
  // Several positions at a time, up to 16 FMA chains (8 with 256-bit vectors).
  constexpr int kPos = kHeads <= 4 ? (S::kLanes == 16 ? 4 : 2) : 1;
  // out in registers: kAcc vectors per head (16 accumulators in all with
  // 512-bit vectors, 8 with 256-bit ones), per pass over a chunk.
  constexpr int kAcc = std::max(1, (S::kLanes == 16 ? 16 : 8) / kHeads);
  const int64_t p_stride = std::min(kAttendChunk, n_pos);  // scores: [kHeads][p_stride]
  // The online softmax per head, continuing part's when given (out holds its
  // unnormalized sum then, read only where its max is above -inf).
  float run_max[kHeads], run_sum[kHeads], alpha[kHeads];
  bool fresh = true;  // out not read
  for (int h = 0; h < kHeads; ++h) {
    run_max[h] = part != nullptr ? part[2 * h] : -INFINITY;
    run_sum[h] = part != nullptr ? part[2 * h + 1] : 0.0f;
    fresh &= run_max[h] == -INFINITY;
  }
  if (!fresh) {  // a head starting here reads its out as 0 (times alpha 0)
    for (int h = 0; h < kHeads; ++h)
      if (run_max[h] == -INFINITY) std::fill(out + h * head_dim, out + (h + 1) * head_dim, 0.0f);
  }
  for (int64_t c = 0, n; c < n_pos; c += n) {
    n = std::min(kAttendChunk - (k_skip + c) % kAttendChunk, n_pos - c);
    const T* vc = v + c * stride;
    if constexpr (kSlabs) {
      // Slab positions (counted from k's first slab) [c + k_skip, that + n).
      const int64_t first = c + k_skip, last = first + n;
      for (int64_t s0 = first / kKeySlab * kKeySlab; s0 < last; s0 += kKeySlab) {
        const int64_t lo = std::max(first, s0) - s0, hi = std::min(last, s0 + kKeySlab) - s0;
        const T* slab = k + s0 / kKeySlab * kKeySlab * stride;
        score_slab<S, kHeads>(q, slab, head_dim, scale, lo, hi, scores, p_stride, s0 - first, slab + kKeySlab * stride,
                              v + std::max<int64_t>(0, s0 - k_skip) * stride);
      }
    } else {
      const T* kc = k + c * stride;
      int64_t j = 0;
      for (; j + kPos <= n; j += kPos) score_keys<S, T, kHeads, kPos>(q, kc, vc, stride, j, p_stride, head_dim, scale, scores);
      for (; j < n; ++j) score_keys<S, T, kHeads, 1>(q, kc, vc, stride, j, p_stride, head_dim, scale, scores);
    }
    for (int h = 0; h < kHeads; ++h) {
      const auto [m, s] = exp_shifted<S>(scores + h * p_stride, n, run_max[h]);
      alpha[h] = m == run_max[h] ? 1.0f : std::exp(run_max[h] - m);  // 0 after -inf
      run_sum[h] = run_sum[h] * alpha[h] + s;
      run_max[h] = m;
    }
    const float* a = c == 0 && fresh ? nullptr : alpha;
    int64_t d0 = 0;
    for (; d0 + kAcc * S::kLanes <= head_dim; d0 += kAcc * S::kLanes)
      weigh_values<S, T, kHeads, kAcc, true>(scores, p_stride, vc + d0, stride, n, head_dim, kAcc * S::kLanes, a,
                                             out + d0);
    if (d0 < head_dim)
      weigh_values<S, T, kHeads, kAcc, false>(scores, p_stride, vc + d0, stride, n, head_dim, head_dim - d0, a,
                                              out + d0);
  }
  for (int h = 0; h < kHeads; ++h) {
    float* o = out + h * head_dim;
    if (n_pos == 0 && fresh) std::fill(o, o + head_dim, 0.0f);
    if (part != nullptr) {
      part[2 * h] = run_max[h], part[2 * h + 1] = run_sum[h];
    } else if (n_pos > 0) {
      simd::scale<S>(o, head_dim, static_cast<float>(1.0 / static_cast<double>(run_sum[h])));
    }
  }
}

// Groups of 8, 4 or 2 heads share their loads, then a single head if one is left.
template <class S, class T>
void attend_group(const float* q, int64_t heads, const T* k, int64_t k_skip, const T* v, int64_t stride,
                  int64_t n_pos, int64_t head_dim, float scale, float* scores, float* out, float* part) {
  for (int64_t h = 0; h < heads;) {
    const int64_t left = heads - h;
    const float* qh = q + h * head_dim;
    float* sh = scores + h * n_pos;
    float* oh = out + h * head_dim;
    float* ph = part != nullptr ? part + 2 * h : nullptr;
    if (left >= 8) {
      attend_heads<S, T, 8>(qh, k, k_skip, v, stride, n_pos, head_dim, scale, sh, oh, ph), h += 8;
    } else if (left >= 4) {
      attend_heads<S, T, 4>(qh, k, k_skip, v, stride, n_pos, head_dim, scale, sh, oh, ph), h += 4;
    } else if (left >= 2) {
      attend_heads<S, T, 2>(qh, k, k_skip, v, stride, n_pos, head_dim, scale, sh, oh, ph), h += 2;
    } else {
      attend_heads<S, T, 1>(qh, k, k_skip, v, stride, n_pos, head_dim, scale, sh, oh, ph), h += 1;
    }
  }
}

// Bit for bit quantize_activations_absmax_ref: max |x| is exact in float (in
// any order: four chains, where one waited on each max's latency), the scale
// is computed in double as there, q = x * s rounded half away from zero.
// Clamping to [-128, 127] before rounding gives the same integers (the bounds
// are integers) and keeps a NaN's lane in range.
template <class S>
ActivationRowQuant quantize_absmax(const float* x, int64_t n, int8_t* q) {
  auto m0 = S::zero(), m1 = S::zero(), m2 = S::zero(), m3 = S::zero();  // (named: GCC kept an array in memory)
  int64_t i = 0;
  for (; i + 4 * S::kLanes <= n; i += 4 * S::kLanes) {
    m0 = S::max(m0, S::abs(S::load(x + i)));
    m1 = S::max(m1, S::abs(S::load(x + i + S::kLanes)));
    m2 = S::max(m2, S::abs(S::load(x + i + 2 * S::kLanes)));
    m3 = S::max(m3, S::abs(S::load(x + i + 3 * S::kLanes)));
  }
  for_lanes<S>(n - i, [&](int64_t j, int64_t m) { m0 = S::max(m0, S::abs(load_n<S>(x + i + j, m))); });
  const auto all = S::max(S::max(m0, m1), S::max(m2, m3));
  const double max = std::fmax(1e-5, static_cast<double>(S::reduce_max(all)));
  const float s = static_cast<float>(127.0 / max);
  const auto vs = S::set1(s), lo = S::set1(-128.0f), hi = S::set1(127.0f);
  auto sum = S::zero_i32();
  for_lanes<S>(n, [&](int64_t j, int64_t m) {
    const auto qi = S::round_half_away(S::min(S::max(S::mul(load_n<S>(x + j, m), vs), lo), hi));
    sum = S::add_i32(sum, qi);
    if (m == S::kLanes) {
      S::store_i8(q + j, qi);
    } else {
      S::store_i8_partial(q + j, qi, m);
    }
  });
  return {s, S::reduce_add_i32(sum)};
}

// The scalar loop this replaced took 0.75 us per token for K = 2560 (2 us for
// 6912), serial before each matrix's region: ~7% of a 640x2560 int2 GEMV at 2
// threads. psadbw sums 16-64 bytes per instruction: 0.02-0.27 us.
template <class S>
void group_sums_i8(const int8_t* q, int64_t n, int64_t group, int32_t* out) {
  for (int64_t g = 0; g < n / group; ++g) out[g] = S::sum_i8(q + g * group, group);
}

// The table's two entries: k in slabs (f16) and in rows (f32).
template <class S>
void attend_f16(const float* q, int64_t heads, const uint16_t* k, int64_t k_skip, const uint16_t* v, int64_t stride,
                int64_t n_pos, int64_t head_dim, float scale, float* scores, float* out, float* part) {
  attend_group<S, uint16_t>(q, heads, k, k_skip, v, stride, n_pos, head_dim, scale, scores, out, part);
}
template <class S>
void attend_f32(const float* q, int64_t heads, const float* k, const float* v, int64_t stride, int64_t n_pos,
                int64_t head_dim, float scale, float* scores, float* out, float* part) {
  attend_group<S, float>(q, heads, k, 0, v, stride, n_pos, head_dim, scale, scores, out, part);
}

template <class S>
VectorOps make_vector_ops() {
  return {S::kName,          rms_norm<S>,      rope_rotate<S>,         softmax<S>,
          silu_gate<S>,      relu2_gate<S>,    add<S>,                 scale<S>,
          to_f16<S>,         attend_f16<S>,    attend_f32<S>,          attend_block<S, uint16_t>,
          attend_block<S, float>, quantize_absmax<S>, group_sums_i8<S>,
          log_sum_exp<S>};
}

}  // namespace lowbit::simd
