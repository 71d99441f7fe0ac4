// The up-convert-and-compute GEMV kernels on AVX2: one row block of 16 rows as
// two ymm halves (rows 0-7, rows 8-15) sharing each broadcast activation.
// kVnni: vpdpbusd (AVX-VNNI); otherwise vpmaddubsw + vpmaddwd, exact while
// u0*x0 + u1*x1 fits int16, i.e. u <= 127 (make() checks it). Layout: vnni4_layout.h.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/vnni4_layout.h"
#include "kernels/x86_avx2/int8_dot_avx2.h"
#include "kernels/x86_avx2/token_count.h"
#include "kernels/x86_avx2/vnni4_group_avx2.h"

namespace lowbit {

using avx2::add_group;
using avx2::add_group_tokens;
using avx2::broadcast4;
using avx2::dot_u8s8;
using avx2::prefetch;
using avx2::store_out;
using avx2::store_tokens;

namespace {

// Sum of four accumulators, for rows half*8 .. half*8+7.
inline __m256i sum4(const __m256i* a) {
  return _mm256_add_epi32(_mm256_add_epi32(a[0], a[1]), _mm256_add_epi32(a[2], a[3]));
}

// The paper's 2-bit sequence on 32 bytes (8 rows x 16 k): 1 shift, 2 and,
// 4 vpshufb, 4 dot products into a[0..3].
template <bool kVnni>
inline void int2_step(const uint8_t* c, const __m256i* xb, __m256i lut01, __m256i lut23, __m256i* a) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c));
  const __m256i lo = _mm256_and_si256(w, nibble);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi32(w, 4), nibble);
  a[0] = dot_u8s8<kVnni>(a[0], _mm256_shuffle_epi8(lut01, lo), xb[0]);
  a[1] = dot_u8s8<kVnni>(a[1], _mm256_shuffle_epi8(lut23, lo), xb[1]);
  a[2] = dot_u8s8<kVnni>(a[2], _mm256_shuffle_epi8(lut01, hi), xb[2]);
  a[3] = dot_u8s8<kVnni>(a[3], _mm256_shuffle_epi8(lut23, hi), xb[3]);
}

template <bool kVnni>
void int2_gemv(const Vnni4Task& t) {
  const __m256i lut01 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.lut)));
  const __m256i lut23 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.lut + 16)));
  const uint8_t* c = t.codes;
  const int8_t* x = t.x;
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t g = 0; g < t.groups; ++g) {
    c = vnni4_group_codes(t, g);
    __m256i a[2][4];
    #pragma GCC unroll 2
    for (auto& h : a)
      #pragma GCC unroll 4
      for (auto& v : h) v = _mm256_setzero_si256();
    for (int64_t s = 0; s < t.steps_per_group; ++s, c += 64, x += 16) {
      prefetch(c);
      const __m256i xb[4] = {broadcast4(x), broadcast4(x + 4), broadcast4(x + 8), broadcast4(x + 12)};
      int2_step<kVnni>(c, xb, lut01, lut23, a[0]);
      int2_step<kVnni>(c + 32, xb, lut01, lut23, a[1]);
    }
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) acc[h] = add_group(acc[h], sum4(a[h]), 0, t, g, h);
  }
  store_out(t, acc);
}

// Plain AVX2 with levels spanning at most kInt2Int16MaxSpan (Q2_0, ternary):
// a step's four vpmaddubsw pair sums are added in one int16 accumulator per
// row half for up to kInt2Int16Steps steps (4 x 4 x 2 x 7 x 128 = 28672 at
// most) before one vpmaddwd widens them, instead of a vpmaddwd per product.
inline void int2_step_int16(const uint8_t* c, const __m256i* xb, __m256i lut01, __m256i lut23, __m256i& a) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c));
  const __m256i lo = _mm256_and_si256(w, nibble);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi32(w, 4), nibble);
  const __m256i p0 = _mm256_maddubs_epi16(_mm256_shuffle_epi8(lut01, lo), xb[0]);
  const __m256i p1 = _mm256_maddubs_epi16(_mm256_shuffle_epi8(lut23, lo), xb[1]);
  const __m256i p2 = _mm256_maddubs_epi16(_mm256_shuffle_epi8(lut01, hi), xb[2]);
  const __m256i p3 = _mm256_maddubs_epi16(_mm256_shuffle_epi8(lut23, hi), xb[3]);
  a = _mm256_add_epi16(a, _mm256_add_epi16(_mm256_add_epi16(p0, p1), _mm256_add_epi16(p2, p3)));
}

// The group loop of the plain-AVX2 kernels that add pair sums in int16:
// step(c, x, a) adds one iteration's vpmaddubsw pair sums (kSteps steps,
// kBytes code bytes, kK k) of rows 0-7 to a[0] and of rows 8-15 to a[1]; after
// at most kIterations iterations one vpmaddwd widens them into the group's sums.
template <int64_t kSteps, int64_t kBytes, int64_t kK, int64_t kIterations, typename Step>
inline void int16_sum_gemv(const Vnni4Task& t, int dot_shift, Step step) {
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t* x = t.x;
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t g = 0; g < t.groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t, g);
    __m256i d[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int64_t s0 = 0; s0 < t.steps_per_group; s0 += kSteps * kIterations) {
      const int64_t s1 = std::min(t.steps_per_group, s0 + kSteps * kIterations);
      __m256i a[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
      for (int64_t s = s0; s < s1; s += kSteps, c += kBytes, x += kK) {
        prefetch(c);
        step(c, x, a);
      }
      #pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) d[h] = _mm256_add_epi32(d[h], _mm256_madd_epi16(a[h], ones));
    }
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) acc[h] = add_group(acc[h], d[h], dot_shift, t, g, h);
  }
  store_out(t, acc);
}

void int2_gemv_int16(const Vnni4Task& t) {
  const __m256i lut01 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.lut)));
  const __m256i lut23 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.lut + 16)));
  int16_sum_gemv<1, 64, 16, kInt2Int16Steps>(t, 0, [&](const uint8_t* c, const int8_t* x, __m256i* a) {
    const __m256i xb[4] = {broadcast4(x), broadcast4(x + 4), broadcast4(x + 8), broadcast4(x + 12)};
    int2_step_int16(c, xb, lut01, lut23, a[0]);
    int2_step_int16(c + 32, xb, lut01, lut23, a[1]);
  });
}

// 4-bit codes taken as u (Q4_0: u = nibble, I = D - 8 S), plain AVX2: a
// step's 32 bytes per row half are 8 rows x 8 k; the low nibbles meet x[0..3],
// the high ones x[4..7]. An iteration is two steps (16 k); pair sums are added
// in int16 for kInt4Int16Steps steps before one vpmaddwd (vnni4_layout.h), as
// int2's int16 loop does.
void int4_linear_gemv_int16(const Vnni4Task& t) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  int16_sum_gemv<2, 128, 16, kInt4Int16Steps / 2>(t, 0, [&](const uint8_t* c, const int8_t* x, __m256i* a) {
    prefetch(c + 64);  // the loop prefetches c: both lines of the iteration (one alone: 0.8x the speed)
    #pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
      const __m256i x_lo = broadcast4(x + 8 * s), x_hi = broadcast4(x + 8 * s + 4);
      #pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 64 * s + 32 * h));
        const __m256i lo = _mm256_and_si256(w, nibble);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), nibble);
        a[h] = _mm256_add_epi16(a[h], _mm256_add_epi16(_mm256_maddubs_epi16(lo, x_lo), _mm256_maddubs_epi16(hi, x_hi)));
      }
    }
  });
}

// One step (8 k, 16 rows) of 4-bit codes u against kTokens tokens' x at xoff:
// the nibbles are split once, each token's pair sums go into its int16 a[k].
template <int kTokens>
__attribute__((always_inline)) inline void int4_linear_step_tokens(const uint8_t* c, const Vnni4Task* tasks,
                                                                   int64_t xoff, __m256i nibble, __m256i (*a)[2]) {
  __m256i lo[2], hi[2];
  #pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 32 * h));
    lo[h] = _mm256_and_si256(w, nibble);
    hi[h] = _mm256_and_si256(_mm256_srli_epi16(w, 4), nibble);
  }
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) {
    const __m256i x_lo = broadcast4(tasks[k].x + xoff), x_hi = broadcast4(tasks[k].x + xoff + 4);
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      a[k][h] = _mm256_add_epi16(a[k][h], _mm256_add_epi16(_mm256_maddubs_epi16(lo[h], x_lo),
                                                           _mm256_maddubs_epi16(hi[h], x_hi)));
  }
}

// int4_linear_gemv_int16 for kTokens tokens of the same row block (tasks
// differ in x, xsum, inv and out only), for groups of one int16 window (4
// steps, 32 k: Q4_0's): each step's nibbles are split once for all tokens,
// the 4 steps unroll with every token's int16 sums in registers (session 17's
// loop for any group kept them on the stack, re-read and re-written per step:
// 0.79x the speed), the group's scales are converted once for all tokens, and
// the float sums wait in acc[] (memory) between groups. Each token's integers
// and float operations are the one-token kernel's, in the same order: its out
// is the same bits.
template <int kTokens>
void int4_linear_tokens_window(const Vnni4Task* tasks) {
  static_assert(kInt4Int16Steps == 4);
  const Vnni4Task& t0 = tasks[0];
  const __m256i nibble = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
  alignas(32) float acc[kTokens][2][8] = {};
  for (int64_t g = 0; g < t0.groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t0, g);
    prefetch(c);
    prefetch(c + 64);
    prefetch(c + 128);
    prefetch(c + 192);
    __m256i a[kTokens][2];
    #pragma GCC unroll 4
    for (int k = 0; k < kTokens; ++k) a[k][0] = a[k][1] = _mm256_setzero_si256();
    #pragma GCC unroll 4
    for (int st = 0; st < 4; ++st) int4_linear_step_tokens<kTokens>(c + 64 * st, tasks, 32 * g + 8 * st, nibble, a);
    add_group_tokens<kTokens>(tasks, g, [&](int k, int h) { return _mm256_madd_epi16(a[k][h], ones); }, acc);
  }
  store_tokens<kTokens>(tasks, acc);
}

// int16_sum_gemv for kTokens tokens of one row block (tasks differ in x,
// xsum, inv and out only): step(c, xoff, a) adds one iteration's pair sums
// (kSteps steps, kBytes code bytes, kK k from x + xoff) of token k's rows 0-7
// to a[k][0] and of rows 8-15 to a[k][1], unpacking the codes once for all
// tokens. Each token's int16 windows and int32 group sums are the one-token
// loop's (integer sums, exact in any order), and add_group_tokens keeps its
// float operations and their order (kShift: add_group's dot_shift), so its out
// is the same bits. The int16 sums of all tokens stay in registers for a
// window; the group's int32 sums too where a group is one window (Q2_0's 64 k).
template <int kTokens, int64_t kSteps, int64_t kBytes, int64_t kK, int64_t kIterations, int kShift, typename Step>
inline void int16_sum_tokens(const Vnni4Task* tasks, Step step) {
  const Vnni4Task& t0 = tasks[0];
  const __m256i ones = _mm256_set1_epi16(1);
  alignas(32) float acc[kTokens][2][8] = {};  // float sums wait in memory between groups
  int64_t xoff = 0;
  for (int64_t g = 0; g < t0.groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t0, g);
    __m256i d[kTokens][2];
    #pragma GCC unroll 4
    for (int k = 0; k < kTokens; ++k) d[k][0] = d[k][1] = _mm256_setzero_si256();
    for (int64_t s0 = 0; s0 < t0.steps_per_group; s0 += kSteps * kIterations) {
      const int64_t s1 = std::min(t0.steps_per_group, s0 + kSteps * kIterations);
      __m256i a[kTokens][2];
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k) a[k][0] = a[k][1] = _mm256_setzero_si256();
      for (int64_t s = s0; s < s1; s += kSteps, c += kBytes, xoff += kK) {
        prefetch(c);
        step(c, xoff, a);
      }
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k)
        #pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) d[k][h] = _mm256_add_epi32(d[k][h], _mm256_madd_epi16(a[k][h], ones));
    }
    add_group_tokens<kTokens>(tasks, g, [&](int k, int h) { return _mm256_slli_epi32(d[k][h], kShift); }, acc);
  }
  store_tokens<kTokens>(tasks, acc);
}

// int2_gemv_int16 for kTokens tokens: each step's codes looked up once.
template <int kTokens>
void int2_tokens_int16(const Vnni4Task* tasks) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i lut01 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tasks[0].lut)));
  const __m256i lut23 =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tasks[0].lut + 16)));
  int16_sum_tokens<kTokens, 1, 64, 16, kInt2Int16Steps, 0>(tasks, [&](const uint8_t* c, int64_t xoff, __m256i (*a)[2]) {
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 32 * h));
      const __m256i lo = _mm256_and_si256(w, nibble), hi = _mm256_and_si256(_mm256_srli_epi32(w, 4), nibble);
      const __m256i u[4] = {_mm256_shuffle_epi8(lut01, lo), _mm256_shuffle_epi8(lut23, lo),
                            _mm256_shuffle_epi8(lut01, hi), _mm256_shuffle_epi8(lut23, hi)};
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k) {
        const int8_t* x = tasks[k].x + xoff;
        const __m256i p0 = _mm256_maddubs_epi16(u[0], broadcast4(x));
        const __m256i p1 = _mm256_maddubs_epi16(u[1], broadcast4(x + 4));
        const __m256i p2 = _mm256_maddubs_epi16(u[2], broadcast4(x + 8));
        const __m256i p3 = _mm256_maddubs_epi16(u[3], broadcast4(x + 12));
        a[k][h] = _mm256_add_epi16(a[k][h], _mm256_add_epi16(_mm256_add_epi16(p0, p1), _mm256_add_epi16(p2, p3)));
      }
    }
  });
}

// 4-bit indices into a codebook of 16 signed int8 values (IQ4_NL: t.lut,
// I = D), plain AVX2: vpshufb looks the values up, and vpmaddubsw multiplies
// |x| (0..128, unsigned) by the value with x's sign (vpsignb), exact for
// values in [-127, 127]: a pair sum is at most 2 x 128 x 127 = 32512. Two
// such sums would not fit int16, so each is widened by its own vpmaddwd.
void int4_lut_gemv_int16(const Vnni4Task& t) {
  const __m256i nibble = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
  const __m256i book = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.lut)));
  const int8_t* x = t.x;
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t g = 0; g < t.groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t, g);
    __m256i d[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int64_t s = 0; s < t.steps_per_group; ++s, c += 64, x += 8) {
      prefetch(c);
      const __m256i x_lo = broadcast4(x), x_hi = broadcast4(x + 4);
      const __m256i ax_lo = _mm256_abs_epi8(x_lo), ax_hi = _mm256_abs_epi8(x_hi);
      #pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 32 * h));
        const __m256i lo = _mm256_shuffle_epi8(book, _mm256_and_si256(w, nibble));
        const __m256i hi = _mm256_shuffle_epi8(book, _mm256_and_si256(_mm256_srli_epi16(w, 4), nibble));
        const __m256i p_lo = _mm256_maddubs_epi16(ax_lo, _mm256_sign_epi8(lo, x_lo));
        const __m256i p_hi = _mm256_maddubs_epi16(ax_hi, _mm256_sign_epi8(hi, x_hi));
        d[h] = _mm256_add_epi32(d[h], _mm256_add_epi32(_mm256_madd_epi16(p_lo, ones), _mm256_madd_epi16(p_hi, ones)));
      }
    }
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) acc[h] = add_group(acc[h], d[h], 0, t, g, h);
  }
  store_out(t, acc);
}

// int4_lut_gemv_int16 for kTokens tokens of one row block: each step's
// codebook values are looked up once for all of them; each token's sums are
// the one-token kernel's, in its order, so its out is the same bits.
template <int kTokens>
void int4_lut_tokens_int16(const Vnni4Task* tasks) {
  const Vnni4Task& t0 = tasks[0];
  const __m256i nibble = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
  const __m256i book = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t0.lut)));
  alignas(32) float acc[kTokens][2][8] = {};  // float sums wait in memory between groups
  int64_t xoff = 0;
  for (int64_t g = 0; g < t0.groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t0, g);
    __m256i d[kTokens][2];
    #pragma GCC unroll 4
    for (int k = 0; k < kTokens; ++k) d[k][0] = d[k][1] = _mm256_setzero_si256();
    for (int64_t s = 0; s < t0.steps_per_group; ++s, c += 64, xoff += 8) {
      prefetch(c);
      __m256i lo[2], hi[2];
      #pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 32 * h));
        lo[h] = _mm256_shuffle_epi8(book, _mm256_and_si256(w, nibble));
        hi[h] = _mm256_shuffle_epi8(book, _mm256_and_si256(_mm256_srli_epi16(w, 4), nibble));
      }
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k) {
        const __m256i x_lo = broadcast4(tasks[k].x + xoff), x_hi = broadcast4(tasks[k].x + xoff + 4);
        const __m256i ax_lo = _mm256_abs_epi8(x_lo), ax_hi = _mm256_abs_epi8(x_hi);
        #pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          const __m256i p_lo = _mm256_maddubs_epi16(ax_lo, _mm256_sign_epi8(lo[h], x_lo));
          const __m256i p_hi = _mm256_maddubs_epi16(ax_hi, _mm256_sign_epi8(hi[h], x_hi));
          d[k][h] = _mm256_add_epi32(d[k][h], _mm256_add_epi32(_mm256_madd_epi16(p_lo, ones), _mm256_madd_epi16(p_hi, ones)));
        }
      }
    }
    add_group_tokens<kTokens>(tasks, g, [&](int k, int h) { return d[k][h]; }, acc);
  }
  store_tokens<kTokens>(tasks, acc);
}

// int1's lines (vnni4_layout.h) are 8 bit planes of 32 bytes per row half.
// With VNNI, an AND with 1 << q (q = 0..3) leaves plane q as u = 0 or 2^q, and
// the same AND of the line shifted right by 4 leaves plane q + 4 at the same
// scale: both go into a[q], 9 instructions up-convert 8 planes, and the group
// sum shifts each a[q] back, exactly. (The layout of 32 bits per 8 rows x 4 k
// had needed a broadcast, a shuffle, an AND and a min per plane: the paper's
// compare and blend.)
inline __m256i sum4_planes(const __m256i* a) {
  return _mm256_add_epi32(_mm256_add_epi32(a[0], _mm256_srai_epi32(a[1], 1)),
                          _mm256_add_epi32(_mm256_srai_epi32(a[2], 2), _mm256_srai_epi32(a[3], 3)));
}

// AVX-VNNI (plain AVX2: int1_gemv_int16 below).
void int1_gemv_vnni(const Vnni4Task& t) {
  const int8_t* x = t.x;
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t g = 0; g < t.groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t, g);
    __m256i a[2][4];
    #pragma GCC unroll 2
    for (auto& h : a)
      #pragma GCC unroll 4
      for (auto& v : h) v = _mm256_setzero_si256();
    for (int64_t s = 0; s < t.steps_per_group; ++s, c += 64, x += 32) {
      prefetch(c);
      // Plane by plane, both halves: 8 accumulators, 4 line vectors, 2
      // activations, the bit and a temporary fit the 16 ymm registers.
      const __m256i w[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(c)),
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 32))};
      const __m256i w4[2] = {_mm256_srli_epi16(w[0], 4), _mm256_srli_epi16(w[1], 4)};
      #pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << q));
        const __m256i x_lo = broadcast4(x + 4 * q), x_hi = broadcast4(x + 16 + 4 * q);
        #pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          a[h][q] = dot_u8s8<true>(a[h][q], _mm256_and_si256(w[h], bit), x_lo);
          a[h][q] = dot_u8s8<true>(a[h][q], _mm256_and_si256(w4[h], bit), x_hi);
        }
      }
    }
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) acc[h] = add_group(acc[h], sum4_planes(a[h]), 1, t, g, h);
  }
  store_out(t, acc);
}

// Plain AVX2: vpmaddubsw's int16 pair sums leave no room for u = 2^q, so each
// plane p becomes u = bit (0/1) by a shift and an AND. The pair sums are added
// in int16 for up to 8 lines (8 x 8 x 2 x 128 = 16384 at most) before one
// vpmaddwd widens them, instead of a vpmaddwd per product.
inline constexpr int64_t kInt1Int16Iterations = 8;

// Plane p of a row half's 32 bytes as u = 0/1.
inline __m256i int1_plane(__m256i w, int p) {
  return _mm256_and_si256(_mm256_srli_epi16(w, p), _mm256_set1_epi8(1));
}

void int1_gemv_int16(const Vnni4Task& t) {
  int16_sum_gemv<1, 64, 32, kInt1Int16Iterations>(t, 1, [](const uint8_t* c, const int8_t* x, __m256i* a) {
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 32 * h));
      #pragma GCC unroll 8
      for (int p = 0; p < 8; ++p) a[h] = _mm256_add_epi16(a[h], _mm256_maddubs_epi16(int1_plane(w, p), broadcast4(x + 4 * p)));
    }
  });
}

// int1_gemv_int16 for kTokens tokens: each plane up-converted once.
template <int kTokens>
void int1_tokens_int16(const Vnni4Task* tasks) {
  int16_sum_tokens<kTokens, 1, 64, 32, kInt1Int16Iterations, 1>(tasks, [&](const uint8_t* c, int64_t xoff, __m256i (*a)[2]) {
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 32 * h));
      #pragma GCC unroll 8
      for (int p = 0; p < 8; ++p) {
        const __m256i u = int1_plane(w, p);
        #pragma GCC unroll 4
        for (int k = 0; k < kTokens; ++k)
          a[k][h] = _mm256_add_epi16(a[k][h], _mm256_maddubs_epi16(u, broadcast4(tasks[k].x + xoff + 4 * p)));
      }
    }
  });
}

// u = w + 128 spans 0..255, beyond vpmaddubsw's exact range: VNNI here,
// q8_0_gemv_widened below on plain AVX2.
void q8_0_gemv(const Vnni4Task& t) {
  const uint8_t* c = t.codes;
  const int8_t* x = t.x;
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t g = 0; g < t.groups; ++g) {
    c = vnni4_group_codes(t, g);
    __m256i a[2][4];
    #pragma GCC unroll 2
    for (auto& h : a)
      #pragma GCC unroll 4
      for (auto& v : h) v = _mm256_setzero_si256();
    for (int64_t s = 0; s < t.steps_per_group; s += 4, c += 256, x += 16) {
      #pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) prefetch(c + 64 * i);
      #pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        const __m256i xb = broadcast4(x + 4 * i);
        #pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
          a[h][i] = dot_u8s8<true>(a[h][i], _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 64 * i + 32 * h)), xb);
      }
    }
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) acc[h] = add_group(acc[h], sum4(a[h]), 0, t, g, h);
  }
  store_out(t, acc);
}

// q8_0_gemv for kTokens tokens of one row block: each 32-byte half-step
// loaded once for all of them, one accumulator per token and half (the
// tokens' chains side by side). Each token's int32 group sums are exact and
// its float steps are q8_0_gemv's, so its out is the same bits. The float
// sums wait in memory between groups (16 ymm registers).
template <int kTokens>
void q8_0_tokens(const Vnni4Task* t) {
  __m256 acc[kTokens][2];
  for (auto& k : acc) k[0] = k[1] = _mm256_setzero_ps();
  for (int64_t g = 0; g < t[0].groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t[0], g);
    const int64_t x0 = g * 4 * t[0].steps_per_group;
    __m256i a[kTokens][2];
    #pragma GCC unroll 4
    for (int k = 0; k < kTokens; ++k) a[k][0] = a[k][1] = _mm256_setzero_si256();
    for (int64_t s = 0; s < t[0].steps_per_group; ++s, c += 64) {
      prefetch(c);
      const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(c));
      const __m256i w1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 32));
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k) {
        const __m256i xb = broadcast4(t[k].x + x0 + 4 * s);
        a[k][0] = dot_u8s8<true>(a[k][0], w0, xb);
        a[k][1] = dot_u8s8<true>(a[k][1], w1, xb);
      }
    }
    #pragma GCC unroll 4
    for (int k = 0; k < kTokens; ++k)
      for (int h = 0; h < 2; ++h) acc[k][h] = add_group(acc[k][h], a[k][h], 0, t[k], g, h);
  }
  for (int k = 0; k < kTokens; ++k) store_out(t[k], acc[k]);
}

// Plain AVX2: u = w + 128 widened to int16 and multiplied by vpmaddwd, exact
// for every u and x (one product pair is at most 2 x 255 x 128). Each 16-byte
// half of a row half's 32 bytes (4 rows x 4 k) widens to one ymm; vpmaddwd
// against x's 4 int16 repeated leaves each row's sum in two adjacent lanes,
// added by one vphaddd per group.
void q8_0_gemv_widened(const Vnni4Task& t) {
  const uint8_t* c = t.codes;
  const int8_t* x = t.x;
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t g = 0; g < t.groups; ++g) {
    c = vnni4_group_codes(t, g);
    __m256i a[2][2];  // [half][rows 0-3 | rows 4-7 of the half]: lanes row r (k 0,1), row r (k 2,3), ...
    #pragma GCC unroll 2
    for (auto& h : a)
      #pragma GCC unroll 2
      for (auto& v : h) v = _mm256_setzero_si256();
    for (int64_t s = 0; s < t.steps_per_group; s += 4, c += 256, x += 16) {
      #pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) prefetch(c + 64 * i);
      const __m256i x16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
      const __m256i xq[4] = {_mm256_permute4x64_epi64(x16, 0x00), _mm256_permute4x64_epi64(x16, 0x55),
                             _mm256_permute4x64_epi64(x16, 0xaa), _mm256_permute4x64_epi64(x16, 0xff)};
      #pragma GCC unroll 4
      for (int i = 0; i < 4; ++i)
        #pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
          #pragma GCC unroll 2
          for (int q = 0; q < 2; ++q) {
            const __m256i u = _mm256_cvtepu8_epi16(
                _mm_load_si128(reinterpret_cast<const __m128i*>(c + 64 * i + 32 * h + 16 * q)));
            a[h][q] = _mm256_add_epi32(a[h][q], _mm256_madd_epi16(u, xq[i]));
          }
    }
    // hadd: [r0 r1 r4 r5 | r2 r3 r6 r7] as 64-bit pairs; 0xd8 puts them in row order.
    #pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      acc[h] = add_group(acc[h], _mm256_permute4x64_epi64(_mm256_hadd_epi32(a[h][0], a[h][1]), 0xd8), 0, t, g, h);
  }
  store_out(t, acc);
}

}  // namespace

void q8_0_gemv_avx2(const Vnni4Task& t) { q8_0_gemv_widened(t); }
void int2_gemv_avx2(const Vnni4Task& t) { int2_gemv<false>(t); }
void int2_gemv_avx2_int16(const Vnni4Task& t) { int2_gemv_int16(t); }
void int2_tokens_avx2_int16(const Vnni4Task* tasks, int count) {
  avx2::with_token_count<2>(count, [&](auto n) { int2_tokens_int16<decltype(n)::value>(tasks); });
}
void int2_gemv_avx_vnni(const Vnni4Task& t) { int2_gemv<true>(t); }
void int1_gemv_avx2(const Vnni4Task& t) { int1_gemv_int16(t); }
void int1_tokens_avx2(const Vnni4Task* tasks, int count) {
  avx2::with_token_count<2>(count, [&](auto n) { int1_tokens_int16<decltype(n)::value>(tasks); });
}
void int4_linear_gemv_avx2(const Vnni4Task& t) { int4_linear_gemv_int16(t); }
void int4_linear_tokens_avx2(const Vnni4Task* tasks, int count) {
  if (tasks[0].steps_per_group != kInt4Int16Steps) {  // no such layout today: one token at a time
    for (int k = 0; k < count; ++k) int4_linear_gemv_int16(tasks[k]);
    return;
  }
  avx2::with_token_count<2>(count, [&](auto n) { int4_linear_tokens_window<decltype(n)::value>(tasks); });
}
void int4_lut_gemv_avx2(const Vnni4Task& t) { int4_lut_gemv_int16(t); }
void int4_lut_tokens_avx2(const Vnni4Task* tasks, int count) {
  avx2::with_token_count<2>(count, [&](auto n) { int4_lut_tokens_int16<decltype(n)::value>(tasks); });
}
void int1_gemv_avx_vnni(const Vnni4Task& t) { int1_gemv_vnni(t); }
void q8_0_gemv_avx_vnni(const Vnni4Task& t) { q8_0_gemv(t); }
void q8_0_tokens_avx_vnni(const Vnni4Task* tasks, int count) {
  avx2::with_token_count<2>(count, [&](auto n) { q8_0_tokens<decltype(n)::value>(tasks); });
}

}  // namespace lowbit
