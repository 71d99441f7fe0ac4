// What the factored block kernels share (simd_k_quant_body.h,
// simd_q2_k_body.h, simd_signed_k_body.h, simd_q4_1_body.h): per token a few
// partial totals, each taking step * (values . x) for a run of values in
// turn, the loop that unpacks a row's blocks one ahead, and the dispatch of a
// call's token count to a compile-time one.
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace lowbit::simd {

// Per token kAcc partial totals (4 for one token, 2 for two, 1 for more): a
// run's fma goes to one of them in turn, so each chain is short enough to
// hide behind the others.
template <class S, int kTokens>
struct BlockTotals {
  using V = typename S::V;
  static constexpr int kAcc = kTokens == 1 ? 4 : kTokens == 2 ? 2 : 1;
  V total[kTokens][kAcc];

  BlockTotals() {
    #pragma GCC unroll 8
    for (int t = 0; t < kTokens; ++t)
      #pragma GCC unroll 4
      for (int a = 0; a < kAcc; ++a) total[t][a] = S::zero();
  }
  // total[t][run % kAcc] += step * sum_c q[c] * x_t[c lanes], token t's
  // values at x + t * x_stride. run is a constant once the callers' loops
  // unroll: with a computed index the compiler keeps the totals in memory.
  template <int kVectors>
  [[gnu::always_inline]] void add(int run, const V (&q)[kVectors], const float* x, int64_t x_stride, V step) {
    #pragma GCC unroll 8
    for (int t = 0; t < kTokens; ++t) {
      const float* xt = x + t * x_stride;
      V dot = S::mul(q[0], S::load(xt));
      #pragma GCC unroll 4
      for (int c = 1; c < kVectors; ++c) dot = S::fmadd(q[c], S::load(xt + c * S::kLanes), dot);
      total[t][run % kAcc] = S::fmadd(step, dot, total[t][run % kAcc]);
    }
  }
  // kRuns runs of kRunValues signed byte values (v) against x, run s scaled
  // by step[s]: a block's sub-blocks.
  template <int kRunValues, int kRuns>
  [[gnu::always_inline]] void add_runs(const int8_t* v, const float* x, int64_t x_stride, const float* step) {
    static_assert(kRunValues % S::kLanes == 0);
    #pragma GCC unroll 16
    for (int s = 0; s < kRuns; ++s) {
      V q[kRunValues / S::kLanes];
      #pragma GCC unroll 4
      for (int c = 0; c < kRunValues / S::kLanes; ++c) q[c] = S::load_i8(v + kRunValues * s + c * S::kLanes);
      add(s, q, x + kRunValues * s, x_stride, S::set1(step[s]));
    }
  }
  float sum(int t) const {
    V s = total[t][0];
    #pragma GCC unroll 4
    for (int a = 1; a < kAcc; ++a) s = S::add(s, total[t][a]);
    return S::reduce_add(s);
  }
};

// The dequantization the block types share, for many tokens' tiles: kRuns
// runs of kRunValues values stored centred in v (value = v + center, exact)
// into floats exactly as the references form them: value * step[s], then
// less offset[s] where the type has offsets (kOffset; a reference that adds a
// min m is matched by offset -m, as a - (-m) == a + m exactly). Without
// offsets v holds the values themselves.
template <class S, int kRunValues, int kRuns, bool kOffset>
[[gnu::always_inline]] inline void dequantize_runs(const int8_t* v, int center, const float* step, const float* offset,
                                                   float* out) {
  static_assert(kRunValues % S::kLanes == 0);
  const typename S::V c = S::set1(static_cast<float>(center));
  #pragma GCC unroll 16
  for (int s = 0; s < kRuns; ++s) {
    const typename S::V vs = S::set1(step[s]);
    #pragma GCC unroll 4
    for (int l = 0; l < kRunValues; l += S::kLanes) {
      const typename S::V q = S::load_i8(v + kRunValues * s + l);
      if constexpr (kOffset)
        S::store(out + kRunValues * s + l, S::sub(S::mul(S::add(q, c), vs), S::set1(offset[s])));
      else
        S::store(out + kRunValues * s + l, S::mul(q, vs));
    }
  }
}

#if defined(__AVX2__)
// Bit kFrom of every byte moved to bit kTo (the other bits 0), by a 16-bit
// shift and a mask: bit kTo of each byte then comes from bit kFrom of the
// same byte, never the neighbouring one (the unpacks of Q5_K's and Q3_K's
// high bits).
template <int kFrom, int kTo>
inline __m256i move_bit(__m256i bytes) {
  static_assert(kFrom >= 0 && kFrom < 8 && kTo >= 0 && kTo < 8);
  const __m256i shifted = kFrom <= kTo ? _mm256_slli_epi16(bytes, kTo - kFrom) : _mm256_srli_epi16(bytes, kFrom - kTo);
  return _mm256_and_si256(shifted, _mm256_set1_epi8(static_cast<char>(1 << kTo)));
}
#endif

// body(i, block, v) for each of a row's `blocks` blocks, v the block's
// kValues values as Values::unpack writes them (Values::kBlockBytes a block).
// Each block is unpacked one block ahead, so its loads do not wait on its own
// 8-byte stores (a load spanning two stores in flight cannot be forwarded).
template <class Values, int kValues, class Body>
__attribute__((always_inline)) inline void for_each_unpacked_block(const uint8_t* row, int64_t blocks, Body&& body) {
  alignas(64) int8_t unpacked[2][kValues];
  if (blocks > 0) Values::unpack(row, unpacked[0]);
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* block = row + i * Values::kBlockBytes;
    if (i + 1 < blocks) Values::unpack(block + Values::kBlockBytes, unpacked[(i + 1) & 1]);
    body(i, block, static_cast<const int8_t*>(unpacked[i & 1]));
  }
}

#if defined(__AVX2__)
// The sum of an AVX2 vector's 8 lanes (the per-sub-block offset terms, 8 sub-blocks a vector).
inline float sum_lanes(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#endif

// f(std::integral_constant<int, n>) for n = tokens (1..3), or 4 for more.
template <class F>
void with_token_count(int tokens, F&& f) {
  switch (tokens) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    default: f(std::integral_constant<int, 4>{}); break;
  }
}

}  // namespace lowbit::simd
