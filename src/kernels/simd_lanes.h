// Helpers every body over a lane type S uses (simd_ops_body.h,
// simd_block_attention_body.h): a vector exp, and loops and loads that take
// whole vectors and then one partial vector.
#pragma once

#include <cstdint>

namespace lowbit::simd {

// The largest float below 1/2 (0.5 - 2^-25). For a float v with |v| < 2^23,
// truncating v + copysign(kHalfBelow, v) (the sum rounded to float) gives v
// rounded half away from zero, as std::round. A sum can round up across an
// integer n only where it falls short of n by less than half its spacing,
// which needs v's spacing finer than the sum's: v just below the binade the
// sum reaches. Past 1 that cannot happen short of an integer, and below it
// the one such case is v = 0.5 - 2^-25 itself, whose sum 1 - 2^-25 lies at
// 1 - 2^-24 exactly. Checked over every float of magnitude <= 128.5 (the
// int8 quantization's range). One add and one truncating conversion, where
// trunc, a compare and a select took five.
inline constexpr float kHalfBelow = 0.49999997f;

// exp(x) to ~1 ulp on [-87.3, 88] (Cephes' expf polynomial); inputs are
// clamped to that range, so exp(-inf) gives ~1e-38 rather than 0.
template <class S>
typename S::V exp(typename S::V x) {
  using V = typename S::V;
  x = S::min(S::max(x, S::set1(-87.3f)), S::set1(88.0f));
  const V n = S::floor(S::fmadd(x, S::set1(1.44269504088896341f), S::set1(0.5f)));
  x = S::fnmadd(n, S::set1(0.693359375f), x);
  x = S::fnmadd(n, S::set1(-2.12194440e-4f), x);
  V p = S::set1(1.9875691500e-4f);
  p = S::fmadd(p, x, S::set1(1.3981999507e-3f));
  p = S::fmadd(p, x, S::set1(8.3334519073e-3f));
  p = S::fmadd(p, x, S::set1(4.1665795894e-2f));
  p = S::fmadd(p, x, S::set1(1.6666665459e-1f));
  p = S::fmadd(p, x, S::set1(5.0000001201e-1f));
  p = S::fmadd(p, S::mul(x, x), S::add(x, S::set1(1.0f)));
  return S::mul(p, S::pow2(n));
}

// Calls f(i, lanes) over [0, n) in whole vectors, then f(i, rest) once.
template <class S, class F>
inline void for_lanes(int64_t n, F&& f) {
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) f(i, int64_t{S::kLanes});
  if (i < n) f(i, n - i);
}

template <class S>
typename S::V load_n(const float* p, int64_t n) {
  return n == S::kLanes ? S::load(p) : S::load_partial(p, n);
}
template <class S>
void store_n(float* p, typename S::V v, int64_t n) {
  if (n == S::kLanes) {
    S::store(p, v);
  } else {
    S::store_partial(p, v, n);
  }
}
template <class S>
typename S::V load_n(const uint16_t* p, int64_t n) {
  return n == S::kLanes ? S::load_f16(p) : S::load_f16_partial(p, n);
}

}  // namespace lowbit::simd
