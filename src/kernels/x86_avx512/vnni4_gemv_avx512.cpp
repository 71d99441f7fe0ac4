// The up-convert-and-compute GEMV kernels on AVX-512 VNNI: one row block of 16
// rows (one zmm of int32 accumulators) times one token. Layout: vnni4_layout.h.
#include <immintrin.h>

#include <utility>

#include "kernels/vnni4_layout.h"
#include "kernels/vnni4_matmul.h"
#include "kernels/x86_avx512/int8_dot_avx512.h"

// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here reads them.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lowbit {

using avx512::broadcast4;
using avx512::dot_u8s8;

namespace {

// d * I rounded to float on its own, as the reference does: g++ fuses a
// multiply and an add into an FMA by default (-ffp-contract=fast in C++),
// which would round once and differ from the reference in the last bit.
inline __m512 rounded_product(__m512 a, __m512 b) {
  __m512 p = _mm512_mul_ps(a, b);
  __asm__("" : "+v"(p));
  return p;
}

// acc + d_g * float(I_g) with I_g = D_g + xsum_factor * S_g (mul then add, as the reference).
inline __m512 add_group(__m512 acc, __m512i d_sum, const Vnni4Task& t, int64_t g) {
  const __m512i isum = _mm512_add_epi32(d_sum, _mm512_set1_epi32(t.xsum_factor * t.xsum[g]));
  const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(vnni4_group_scales(t, g))));
  return _mm512_add_ps(acc, rounded_product(d, _mm512_cvtepi32_ps(isum)));
}

// Non-temporal where kNta (AMD): each weight line is used once per token
// (vnni4_layout.h). On a 16-core Intel Xeon prefetcht0 decoded the Q8_0-head
// model 16-45% faster and streamed int2 ~1.8x as fast at 1 thread
// (docs/performance.md "Session 8"), so other vendors get the _t0 kernels.
template <bool kNta, int64_t kAhead = kVnni4PrefetchBytes>
inline void prefetch(const uint8_t* p) {
  _mm_prefetch(reinterpret_cast<const char*>(p + kAhead), kNta ? _MM_HINT_NTA : _MM_HINT_T0);
}
// int2's distance (vnni4_layout.h): kInt2PrefetchBytes on AMD, 2 KiB in the _t0 kernels.
template <bool kNta>
inline void prefetch_int2(const uint8_t* p) { prefetch<kNta, kNta ? kInt2PrefetchBytes : kVnni4T0PrefetchBytes>(p); }
// q8_0's: kQ8_0PrefetchBytes on AMD (non-temporal), 2 KiB in the _t0 kernels.
template <bool kNta>
inline void prefetch_q8_0(const uint8_t* p) { prefetch<kNta, kNta ? kQ8_0PrefetchBytes : kVnni4T0PrefetchBytes>(p); }

inline void store_out(const Vnni4Task& t, __m512 acc) { _mm512_store_ps(t.out, _mm512_mul_ps(acc, _mm512_set1_ps(t.inv))); }

// Eight accumulators, so that eight vpdpbusd chains hide its latency (one
// chain per instruction slot would wait ~5 cycles for the previous result).
using Accumulators = __m512i[8];

// f(0) ... f(N-1) written out, so the accumulators stay in registers (-O2
// does not fully unroll a loop over them and would keep them in memory).
template <int N, class F>
inline void unrolled(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(I), ...); }(std::make_integer_sequence<int, N>{});
}

inline __m512i sum8(const Accumulators& a) {
  const __m512i s0 = _mm512_add_epi32(_mm512_add_epi32(a[0], a[1]), _mm512_add_epi32(a[2], a[3]));
  const __m512i s1 = _mm512_add_epi32(_mm512_add_epi32(a[4], a[5]), _mm512_add_epi32(a[6], a[7]));
  return _mm512_add_epi32(s0, s1);
}

// The four activation vectors of a 64-byte step: xb[i] holds x[4i .. 4i + 3]
// in every lane. The streams kernels broadcast them once for all their blocks.
inline void broadcast_step(const int8_t* x, __m512i* xb) {
  unrolled<4>([&](int i) { xb[i] = broadcast4(x + 4 * i); });
}

// One 64-byte load = 16 rows x 16 k of 2-bit codes; two nibble-table shuffles
// per nibble turn it into four VNNI4 vectors of u (the paper's 1 shift + 2 and
// + 4 vpshufb), each meeting its 4 broadcast activations (xb) in one vpdpbusd.
template <bool kNta>
inline void int2_step_shared(const uint8_t* c, const __m512i* xb, __m512i lut01, __m512i lut23, __m512i* a) {
  const __m512i nibble = _mm512_set1_epi8(0x0f);
  prefetch_int2<kNta>(c);
  const __m512i w = _mm512_load_si512(c);
  const __m512i lo = _mm512_and_si512(w, nibble);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi32(w, 4), nibble);
  a[0] = dot_u8s8<true>(a[0], _mm512_shuffle_epi8(lut01, lo), xb[0]);
  a[1] = dot_u8s8<true>(a[1], _mm512_shuffle_epi8(lut23, lo), xb[1]);
  a[2] = dot_u8s8<true>(a[2], _mm512_shuffle_epi8(lut01, hi), xb[2]);
  a[3] = dot_u8s8<true>(a[3], _mm512_shuffle_epi8(lut23, hi), xb[3]);
}
template <bool kNta>
inline void int2_step(const uint8_t* c, const int8_t* x, __m512i lut01, __m512i lut23, __m512i* a) {
  __m512i xb[4];
  broadcast_step(x, xb);
  int2_step_shared<kNta>(c, xb, lut01, lut23, a);
}

// The same 64 bytes when u = code: each mask keeps one bit pair in place, so
// accumulator a[v] collects 4^v u x; the group sum shifts each back, exactly.
// |a[3]| <= 192 x 128 x group / 4 per lane: int32 while group <= 2^18.
template <bool kNta>
inline void int2_linear_step_shared(const uint8_t* c, const __m512i* xb, __m512i* a) {
  prefetch_int2<kNta>(c);
  const __m512i w = _mm512_load_si512(c);
  a[0] = dot_u8s8<true>(a[0], _mm512_and_si512(w, _mm512_set1_epi8(0x03)), xb[0]);
  a[1] = dot_u8s8<true>(a[1], _mm512_and_si512(w, _mm512_set1_epi8(0x0C)), xb[1]);
  a[2] = dot_u8s8<true>(a[2], _mm512_and_si512(w, _mm512_set1_epi8(0x30)), xb[2]);
  a[3] = dot_u8s8<true>(a[3], _mm512_and_si512(w, _mm512_set1_epi8(static_cast<char>(0xC0))), xb[3]);
}
template <bool kNta>
inline void int2_linear_step(const uint8_t* c, const int8_t* x, __m512i* a) {
  __m512i xb[4];
  broadcast_step(x, xb);
  int2_linear_step_shared<kNta>(c, xb, a);
}

// sum over v of (a[v] + a[4 + v]) / 4^v.
inline __m512i sum8_linear(const Accumulators& a) {
  const auto part = [&](int v) {
    return _mm512_maskz_srai_epi32(0xFFFF, _mm512_add_epi32(a[v], a[4 + v]), static_cast<unsigned>(2 * v));
  };
  return _mm512_add_epi32(_mm512_add_epi32(part(0), part(1)), _mm512_add_epi32(part(2), part(3)));
}

// One 64-byte line = 16 rows x 32 k as 8 bit planes (vnni4_layout.h): an AND
// with 1 << q (q = 0..3) leaves plane q as u = 0 or 2^q against x[4q .. 4q + 3],
// and the same AND of the line shifted right by 4 leaves plane q + 4 at the
// same scale, against x[16 + 4q ..]: both go into accumulator a[q], and the
// group sum shifts each a[q] back, exactly (twice_sum4_planes). That is 9 bit
// operations and 8 vpdpbusd per 512 weights. The layout of 64 bits per 4 k
// had needed a mask register, a masked move and a vpdpbusd per 64 weights: in
// a stand-alone loop on an Intel Xeon core ~1.8 cycles per 64 weights, an AND
// and a vpdpbusd ~1.2.
// |a[3]| <= 2 x 4 x 8 x 128 per line and lane: int32 for groups under 2^23 k.
//
// The line's planes: u[q] (x[4q ..]) and u[4 + q] (x[16 + 4q ..]), scale 2^q.
inline void int1_cut_planes(const uint8_t* c, __m512i* u) {
  const __m512i w = _mm512_load_si512(c);
  const __m512i w4 = _mm512_srli_epi16(w, 4);
  unrolled<4>([&](int q) {
    const __m512i bit = _mm512_set1_epi8(static_cast<char>(1 << q));
    u[q] = _mm512_and_si512(w, bit);
    u[4 + q] = _mm512_and_si512(w4, bit);
  });
}

// One line into a[0..3]; xb[p]: x[4p .. 4p + 3] broadcast (broadcast_line).
inline void int1_line_dots(const __m512i* u, const __m512i* xb, __m512i* a) {
  unrolled<4>([&](int q) {
    a[q] = dot_u8s8<true>(a[q], u[q], xb[q]);
    a[q] = dot_u8s8<true>(a[q], u[4 + q], xb[4 + q]);
  });
}

inline void broadcast_line(const int8_t* x, __m512i* xb) {
  unrolled<8>([&](int p) { xb[p] = broadcast4(x + 4 * p); });
}

// 2 D = 2 x sum over q of a[q] / 2^q.
inline __m512i twice_sum4_planes(const __m512i* a) {
  const __m512i d = _mm512_add_epi32(_mm512_add_epi32(a[0], _mm512_srai_epi32(a[1], 1)),
                                     _mm512_add_epi32(_mm512_srai_epi32(a[2], 2), _mm512_srai_epi32(a[3], 3)));
  return _mm512_slli_epi32(d, 1);
}

// 64 bytes = 16 rows x 4 k of u = w + 128.
inline void q8_0_step(const uint8_t* c, const int8_t* x, __m512i* a) {
  *a = dot_u8s8<true>(*a, _mm512_load_si512(c), broadcast4(x));
}

}  // namespace

namespace {

// The group loop of both int2 kernels. Groups go two at a time: group g's
// 64-byte steps into accumulators a[0..3], g + 1's into a[4..7], interleaved,
// so eight vpdpbusd chains hide the latency while each group folds only its
// four (`sum4`). A lone group (the last of an odd count; I2_S's one group per
// row) takes two of its own steps per iteration instead, eight accumulators
// folded by `sum8`. Groups are added to the float sum in order either way.
template <class Step, class Sum8, class Sum4>
void int2_groups(const Vnni4Task& t, Step step, Sum8 sum8, Sum4 sum4) {
  const int64_t x_per_group = 16 * t.steps_per_group;
  __m512 acc = _mm512_setzero_ps();
  int64_t g = 0;
  for (; g + 2 <= t.groups; g += 2) {
    const uint8_t* c = vnni4_group_codes(t, g);  // g + 1's codes follow (vnni4_layout.h)
    const int8_t* x = t.x + g * x_per_group;
    Accumulators a;
    for (auto& v : a) v = _mm512_setzero_si512();
    for (int64_t s = 0; s < t.steps_per_group; ++s, c += 64, x += 16) {
      step(c, x, a);
      step(c + t.group_bytes, x + x_per_group, a + 4);
    }
    acc = add_group(acc, sum4(a), t, g);
    acc = add_group(acc, sum4(a + 4), t, g + 1);
  }
  if (g < t.groups) {
    const uint8_t* c = vnni4_group_codes(t, g);
    const int8_t* x = t.x + g * x_per_group;
    Accumulators a;
    for (auto& v : a) v = _mm512_setzero_si512();
    int64_t s = 0;
    for (; s + 2 <= t.steps_per_group; s += 2, c += 128, x += 32) {
      step(c, x, a);
      step(c + 64, x + 16, a + 4);
    }
    if (s < t.steps_per_group) step(c, x, a);
    acc = add_group(acc, sum8(a), t, g);
  }
  store_out(t, acc);
}

inline __m512i sum4(const __m512i* a) {
  return _mm512_add_epi32(_mm512_add_epi32(a[0], a[1]), _mm512_add_epi32(a[2], a[3]));
}

// sum over v of a[v] / 4^v.
inline __m512i sum4_linear(const __m512i* a) {
  return _mm512_add_epi32(_mm512_add_epi32(a[0], _mm512_srai_epi32(a[1], 2)),
                          _mm512_add_epi32(_mm512_srai_epi32(a[2], 4), _mm512_srai_epi32(a[3], 6)));
}

template <bool kNta>
void int2_gemv(const Vnni4Task& t) {
  const __m512i lut01 = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.lut)));
  const __m512i lut23 = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.lut + 16)));
  int2_groups(
      t, [&](const uint8_t* c, const int8_t* x, __m512i* a) { int2_step<kNta>(c, x, lut01, lut23, a); }, sum8,
      sum4);
}

// Lambdas, not the functions themselves: through function pointers GCC 12 kept
// int2_linear_step out of line, the 8 accumulators in memory (a call and 8
// loads and stores per step), and the GEMV 35% slower out of cache.
template <bool kNta>
void int2_linear_gemv(const Vnni4Task& t) {
  int2_groups(
      t, [](const uint8_t* c, const int8_t* x, __m512i* a) { int2_linear_step<kNta>(c, x, a); },
      [](const Accumulators& a) { return sum8_linear(a); }, [](const __m512i* a) { return sum4_linear(a); });
}

// kBlocks row blocks (tasks of the same K and groups) times one token, line
// by line, each line's activations broadcast once for all blocks.
// I = 2D - S: the doubling in twice_sum4_planes, the -S through xsum_factor.
// Two blocks side by side (Vnni4Spec::pair) drew 95-100% of the read bandwidth
// on an Intel Xeon core where one drew ~70%. Each block's int32 sums are exact
// and its float steps are the same in either form: the same bits.
template <bool kNta, int kBlocks>
void int1_blocks(const Vnni4Task* t) {
  const int8_t* x = t[0].x;
  __m512 acc[kBlocks];
  unrolled<kBlocks>([&](int j) { acc[j] = _mm512_setzero_ps(); });
  for (int64_t g = 0; g < t[0].groups; ++g) {
    const uint8_t* c[kBlocks];
    __m512i a[kBlocks][4];
    unrolled<kBlocks>([&](int j) {
      c[j] = vnni4_group_codes(t[j], g);
      unrolled<4>([&](int q) { a[j][q] = _mm512_setzero_si512(); });
    });
    for (int64_t s = 0; s < t[0].steps_per_group; ++s, x += 32) {
      __m512i xb[8];
      broadcast_line(x, xb);
      unrolled<kBlocks>([&](int j) {
        const uint8_t* line = c[j] + 64 * s;
        prefetch<kNta, kNta ? kVnni4PrefetchBytes : kVnni4T0PrefetchBytes>(line);
        __m512i u[8];
        int1_cut_planes(line, u);
        int1_line_dots(u, xb, a[j]);
      });
    }
    unrolled<kBlocks>([&](int j) { acc[j] = add_group(acc[j], twice_sum4_planes(a[j]), t[j], g); });
  }
  unrolled<kBlocks>([&](int j) { store_out(t[j], acc[j]); });
}

// One row block times kTokens tokens (tasks differ in x, xsum, inv and out):
// each line's 8 planes are cut out once (u[q] and u[4 + q], 2^q each) and meet
// every token's activations. Each token's int32 sums are exact and its float
// steps are int1_blocks', in order, so its out is the same bits. Prefill walks
// a row block's lines once per group of 4 tokens, so the lines are
// prefetched to L1 whatever the vendor: the next tokens read them again.
template <int kTokens>
void int1_tokens(const Vnni4Task* t) {
  __m512 acc[kTokens];
  unrolled<kTokens>([&](int k) { acc[k] = _mm512_setzero_ps(); });
  for (int64_t g = 0; g < t[0].groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t[0], g);
    const int64_t x0 = g * 32 * t[0].steps_per_group;
    __m512i a[kTokens][4];
    unrolled<kTokens>([&](int k) { unrolled<4>([&](int q) { a[k][q] = _mm512_setzero_si512(); }); });
    for (int64_t s = 0; s < t[0].steps_per_group; ++s, c += 64) {
      prefetch<false, kVnni4T0PrefetchBytes>(c);
      __m512i u[8];
      int1_cut_planes(c, u);
      unrolled<kTokens>([&](int k) {
        __m512i xb[8];
        broadcast_line(t[k].x + x0 + 32 * s, xb);
        int1_line_dots(u, xb, a[k]);
      });
    }
    unrolled<kTokens>([&](int k) { acc[k] = add_group(acc[k], twice_sum4_planes(a[k]), t[k], g); });
  }
  unrolled<kTokens>([&](int k) { store_out(t[k], acc[k]); });
}

// I = D - 128 S.
template <bool kNta>
void q8_0_gemv(const Vnni4Task& t) {
  const uint8_t* c = t.codes;
  const int8_t* x = t.x;
  __m512 acc = _mm512_setzero_ps();
  for (int64_t g = 0; g < t.groups; ++g) {
    c = vnni4_group_codes(t, g);
    Accumulators a;
    for (auto& v : a) v = _mm512_setzero_si512();
    int64_t s = 0;
    for (; s + 8 <= t.steps_per_group; s += 8, c += 512, x += 32)
      unrolled<8>([&](int i) { prefetch_q8_0<kNta>(c + 64 * i), q8_0_step(c + 64 * i, x + 4 * i, &a[i]); });
    if (s < t.steps_per_group) {
      unrolled<4>([&](int i) { prefetch_q8_0<kNta>(c + 64 * i), q8_0_step(c + 64 * i, x + 4 * i, &a[i]); });
      c += 256, x += 16;
    }
    acc = add_group(acc, sum8(a), t, g);
  }
  store_out(t, acc);
}

// kTokens tokens of one row block (Vnni4Spec::tokens): each 64-byte step's
// codes loaded once for all of them, two accumulators per token (the tokens'
// chains side by side hide vpdpbusd's latency). Each token's int32 group sums
// are exact and its groups are added in order, so its out is q8_0_gemv's bits.
// A server's batch reads the row block once per token group instead of once
// per token; the lines go to L1 (prefetcht0), as several tokens read them.
template <int kTokens>
void q8_0_tokens(const Vnni4Task* t) {
  __m512 acc[kTokens];
  unrolled<kTokens>([&](int k) { acc[k] = _mm512_setzero_ps(); });
  for (int64_t g = 0; g < t[0].groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t[0], g);
    const int64_t x0 = g * 4 * t[0].steps_per_group;
    __m512i a[kTokens][2];
    unrolled<kTokens>([&](int k) { a[k][0] = a[k][1] = _mm512_setzero_si512(); });
    int64_t s = 0;
    for (; s + 2 <= t[0].steps_per_group; s += 2, c += 128) {
      prefetch<false, kVnni4T0PrefetchBytes>(c);
      prefetch<false, kVnni4T0PrefetchBytes>(c + 64);
      const __m512i w0 = _mm512_load_si512(c), w1 = _mm512_load_si512(c + 64);
      unrolled<kTokens>([&](int k) {
        a[k][0] = dot_u8s8<true>(a[k][0], w0, broadcast4(t[k].x + x0 + 4 * s));
        a[k][1] = dot_u8s8<true>(a[k][1], w1, broadcast4(t[k].x + x0 + 4 * s + 4));
      });
    }
    if (s < t[0].steps_per_group) {
      const __m512i w0 = _mm512_load_si512(c);
      unrolled<kTokens>([&](int k) { a[k][0] = dot_u8s8<true>(a[k][0], w0, broadcast4(t[k].x + x0 + 4 * s)); });
    }
    unrolled<kTokens>([&](int k) { acc[k] = add_group(acc[k], _mm512_add_epi32(a[k][0], a[k][1]), t[k], g); });
  }
  unrolled<kTokens>([&](int k) { store_out(t[k], acc[k]); });
}

// kStreams int2 row blocks at once, group by group, four accumulators each;
// each step's activations broadcast once for all. A group's int32 sum is exact
// in any order and the groups are added to each block's float sum in order,
// so every block's out is bitwise what int2_groups gives it.
template <int kStreams, class Step, class Sum4>
void int2_groups_streams(const Vnni4Task* t, Step step, Sum4 sum4) {
  const Vnni4Task& t0 = t[0];
  const int64_t x_per_group = 16 * t0.steps_per_group;
  __m512 acc[kStreams];
  unrolled<kStreams>([&](int j) { acc[j] = _mm512_setzero_ps(); });
  for (int64_t g = 0; g < t0.groups; ++g) {
    const int8_t* x = t0.x + g * x_per_group;
    const uint8_t* c[kStreams];
    __m512i a[kStreams][4];
    unrolled<kStreams>([&](int j) {
      c[j] = vnni4_group_codes(t[j], g);
      unrolled<4>([&](int i) { a[j][i] = _mm512_setzero_si512(); });
    });
    for (int64_t s = 0; s < t0.steps_per_group; ++s, x += 16) {
      __m512i xb[4];
      broadcast_step(x, xb);
      unrolled<kStreams>([&](int j) { step(c[j] + 64 * s, xb, a[j]); });
    }
    unrolled<kStreams>([&](int j) { acc[j] = add_group(acc[j], sum4(a[j]), t[j], g); });
  }
  unrolled<kStreams>([&](int j) { store_out(t[j], acc[j]); });
}

template <bool kNta, int kStreams>
void int2_linear_gemv_streams(const Vnni4Task* t) {
  int2_groups_streams<kStreams>(
      t, [](const uint8_t* c, const __m512i* xb, __m512i* a) { int2_linear_step_shared<kNta>(c, xb, a); },
      [](const __m512i* a) { return sum4_linear(a); });
}

template <bool kNta, int kStreams>
void int2_gemv_streams(const Vnni4Task* t) {
  const __m512i lut01 = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t[0].lut)));
  const __m512i lut23 = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t[0].lut + 16)));
  int2_groups_streams<kStreams>(
      t, [&](const uint8_t* c, const __m512i* xb, __m512i* a) { int2_step_shared<kNta>(c, xb, lut01, lut23, a); },
      sum4);
}

// kStreams row blocks at once, group by group (each its own task: codes and
// out), kAcc accumulators each. The int32 sums are exact in any order, and the
// groups are added to each block's float sum in order: every block's out is
// bitwise what q8_0_gemv gives it. With the blocks far apart (a third of the
// call's blocks), one core keeps more reads in flight than over one stream.
template <bool kNta, int kStreams>
void q8_0_gemv_streams(const Vnni4Task* t) {
  constexpr int kAcc = kStreams <= 2 ? 8 : 4;
  const Vnni4Task& t0 = t[0];
  __m512 acc[kStreams];
  unrolled<kStreams>([&](int j) { acc[j] = _mm512_setzero_ps(); });
  for (int64_t g = 0; g < t0.groups; ++g) {
    const int8_t* x = t0.x + g * 4 * t0.steps_per_group;
    const uint8_t* c[kStreams];
    __m512i a[kStreams][kAcc];
    unrolled<kStreams>([&](int j) {
      c[j] = vnni4_group_codes(t[j], g);
      unrolled<kAcc>([&](int i) { a[j][i] = _mm512_setzero_si512(); });
    });
    int64_t s = 0;
    for (; s + kAcc <= t0.steps_per_group; s += kAcc)
      unrolled<kStreams>([&](int j) {
        unrolled<kAcc>([&](int i) {
          prefetch_q8_0<kNta>(c[j] + 64 * (s + i));
          q8_0_step(c[j] + 64 * (s + i), x + 4 * (s + i), &a[j][i]);
        });
      });
    for (; s < t0.steps_per_group; ++s)
      unrolled<kStreams>([&](int j) {
        prefetch_q8_0<kNta>(c[j] + 64 * s);
        q8_0_step(c[j] + 64 * s, x + 4 * s, &a[j][0]);
      });
    unrolled<kStreams>([&](int j) {
      __m512i sum = a[j][0];
      for (int i = 1; i < kAcc; ++i) sum = _mm512_add_epi32(sum, a[j][i]);
      acc[j] = add_group(acc[j], sum, t[j], g);
    });
  }
  unrolled<kStreams>([&](int j) { store_out(t[j], acc[j]); });
}

}  // namespace

void q8_0_gemv3_avx512(const Vnni4Task* t) { q8_0_gemv_streams<true, 3>(t); }
void int2_gemv2_avx512(const Vnni4Task* t) { int2_gemv_streams<true, 2>(t); }
void int2_linear_gemv2_avx512(const Vnni4Task* t) { int2_linear_gemv_streams<true, 2>(t); }
void int2_gemv2_avx512_t0(const Vnni4Task* t) { int2_gemv_streams<false, 2>(t); }
void int2_linear_gemv2_avx512_t0(const Vnni4Task* t) { int2_linear_gemv_streams<false, 2>(t); }

void int2_gemv_avx512(const Vnni4Task& t) { int2_gemv<true>(t); }
void int2_gemv_avx512_t0(const Vnni4Task& t) { int2_gemv<false>(t); }
void int2_linear_gemv_avx512(const Vnni4Task& t) { int2_linear_gemv<true>(t); }
void int2_linear_gemv_avx512_t0(const Vnni4Task& t) { int2_linear_gemv<false>(t); }
void int1_gemv2_avx512(const Vnni4Task* t) { int1_blocks<true, 2>(t); }
void int1_gemv2_avx512_t0(const Vnni4Task* t) { int1_blocks<false, 2>(t); }
void int1_tokens_avx512(const Vnni4Task* t, int count) {
  static_assert(kVnni4MaxTokens == 4);
  (count == 2 ? int1_tokens<2> : count == 3 ? int1_tokens<3> : int1_tokens<4>)(t);
}
void int1_gemv_avx512(const Vnni4Task& t) { int1_blocks<true, 1>(&t); }
void int1_gemv_avx512_t0(const Vnni4Task& t) { int1_blocks<false, 1>(&t); }
void q8_0_gemv_avx512(const Vnni4Task& t) { q8_0_gemv<true>(t); }
void q8_0_tokens_avx512(const Vnni4Task* t, int count) {
  static_assert(kVnni4MaxTokens == 4);
  (count == 2 ? q8_0_tokens<2> : count == 3 ? q8_0_tokens<3> : q8_0_tokens<4>)(t);
}
void q8_0_gemv_avx512_t0(const Vnni4Task& t) { q8_0_gemv<false>(t); }

}  // namespace lowbit
