// The int1 lookup kernel (int1_lut.h) and its table builder on AVX2.
//
// Shapes, per row block (16 rows) and step (one unit of 16 k):
//   codes  uint8 [32]        lane L, byte r: row r's indices of quads 2L (low nibble), 2L + 1 (high)
//   tables uint8 [4][32]     the unit's tables (int1_lut.h): low / high bytes of quads 0|2, then 1|3
//   a      int16 [2][16]     per row half (rows 0-7, 8-15), lane 0 sums quads 0, 1, lane 1 quads 2, 3
#include "kernels/int1_lut.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/x86_avx2/token_count.h"
#include "kernels/x86_avx2/vnni4_group_avx2.h"

namespace lowbit {

namespace {

// A lane's int16 sum gains two entries per step, each in -512 .. 508: after
// 32 steps it is within -32768 .. 32512, so the sums are widened every 32.
constexpr int64_t kWindowSteps = 32;
constexpr int64_t kStepBytes = 32;

// Word e of entry_bits(s): bits s and s + 1 of e as its two bytes.
inline __m256i entry_bits(int shift) {
  alignas(32) uint8_t b[32];
  for (int e = 0; e < 16; ++e) {
    b[2 * e] = static_cast<uint8_t>((e >> shift) & 1);
    b[2 * e + 1] = static_cast<uint8_t>((e >> (shift + 1)) & 1);
  }
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(b));
}

// The 16 entries of one quad (x[0..3]) as int16, then split: low bytes in
// lane 0, high bytes in lane 1. Entry e = bits 0, 1 of e times x0, x1 plus
// bits 2, 3 times x2, x3: vpmaddubsw of the bit patterns (bits01, bits23:
// entry_bits(0), entry_bits(2)) with x's pairs.
inline __m256i quad_table(const int8_t* x, __m256i bits01, __m256i bits23) {
  int16_t x01, x23;
  std::memcpy(&x01, x, 2);
  std::memcpy(&x23, x + 2, 2);
  const __m256i entries = _mm256_add_epi16(_mm256_maddubs_epi16(bits01, _mm256_set1_epi16(x01)),
                                           _mm256_maddubs_epi16(bits23, _mm256_set1_epi16(x23)));
  // Per lane: the 8 entries' low bytes, then their high bytes; then
  // [low 0-7, low 8-15 | high 0-7, high 8-15].
  const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,  //
                                         0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(entries, split), 0xd8);
}

// Adds one step of kTokens tokens: the nibbles split once, then per token 4
// lookups, whose low and high bytes vpunpck joins into each row's int16.
template <int kTokens>
__attribute__((always_inline)) inline void lookup_step(const uint8_t* c, const __m256i* const* tables, int64_t unit,
                                                       __m256i (*a)[2]) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(c));
  const __m256i lo = _mm256_and_si256(w, nibble), hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), nibble);
  #pragma GCC unroll 4
  for (int k = 0; k < kTokens; ++k) {
    const __m256i* t = tables[k] + 4 * unit;
    const __m256i l0 = _mm256_shuffle_epi8(_mm256_load_si256(t), lo);
    const __m256i h0 = _mm256_shuffle_epi8(_mm256_load_si256(t + 1), lo);
    const __m256i l1 = _mm256_shuffle_epi8(_mm256_load_si256(t + 2), hi);
    const __m256i h1 = _mm256_shuffle_epi8(_mm256_load_si256(t + 3), hi);
    a[k][0] = _mm256_add_epi16(a[k][0], _mm256_add_epi16(_mm256_unpacklo_epi8(l0, h0), _mm256_unpacklo_epi8(l1, h1)));
    a[k][1] = _mm256_add_epi16(a[k][1], _mm256_add_epi16(_mm256_unpackhi_epi8(l0, h0), _mm256_unpackhi_epi8(l1, h1)));
  }
}

// Rows 0-7 (or 8-15) of a: lane 0's and lane 1's int16 sums widened and added.
inline __m256i widen_lanes(__m256i a) {
  return _mm256_add_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(a)),
                          _mm256_cvtepi16_epi32(_mm256_extracti128_si256(a, 1)));
}

// One row block times kTokens tokens (tasks differ in x, xsum, tables, inv
// and out). Each token's integers are exact sums and its float steps are
// add_group_tokens', in group order, whatever kTokens is: the same bits.
// kSteps > 0: every group is kSteps steps (at most one window), unrolled
// with no window loop (Q1_0's 128 k: 8 steps; the general loop ran 1.27x
// slower there); 0: any group.
template <int kTokens, int64_t kSteps>
void lookup_rows(const Vnni4Task* tasks) {
  static_assert(kSteps <= kWindowSteps);
  const Vnni4Task& t0 = tasks[0];
  const __m256i* tables[kTokens];
  for (int k = 0; k < kTokens; ++k) tables[k] = reinterpret_cast<const __m256i*>(tasks[k].tables);
  alignas(32) float acc[kTokens][2][8] = {};
  __m256 sums[kTokens][2];  // kSteps > 0: the float sums in registers (in memory they wait on store forwarding)
  for (int k = 0; k < kTokens; ++k) sums[k][0] = sums[k][1] = _mm256_setzero_ps();
  int64_t unit = 0;
  for (int64_t g = 0; g < t0.groups; ++g) {
    const uint8_t* c = vnni4_group_codes(t0, g);
    // I = 2 D - S (add_group's shift 1 and xsum factor -1, as int1's kernels).
    if constexpr (kSteps > 0) {
      __m256i a[kTokens][2];
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k) a[k][0] = a[k][1] = _mm256_setzero_si256();
      #pragma GCC unroll 4
      for (int64_t s = 0; s < kSteps; ++s) {
        if (s % 2 == 0) avx2::prefetch(c + kStepBytes * s);  // one per 64-byte line
        lookup_step<kTokens>(c + kStepBytes * s, tables, unit + s, a);
      }
      unit += kSteps;
      #pragma GCC unroll 4
      for (int k = 0; k < kTokens; ++k)
        #pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) sums[k][h] = avx2::add_group(sums[k][h], widen_lanes(a[k][h]), 1, tasks[k], g, h);
    } else {
      alignas(32) int32_t d[kTokens][2][8] = {};  // the group's int32 sums, in memory between windows
      for (int64_t s0 = 0; s0 < t0.steps_per_group; s0 += kWindowSteps) {
        const int64_t s1 = std::min(t0.steps_per_group, s0 + kWindowSteps);
        __m256i a[kTokens][2];
        #pragma GCC unroll 4
        for (int k = 0; k < kTokens; ++k) a[k][0] = a[k][1] = _mm256_setzero_si256();
        for (int64_t s = s0; s < s1; ++s, ++unit, c += kStepBytes) {
          avx2::prefetch(c);
          lookup_step<kTokens>(c, tables, unit, a);
        }
        #pragma GCC unroll 4
        for (int k = 0; k < kTokens; ++k)
          #pragma GCC unroll 2
          for (int h = 0; h < 2; ++h) {
            __m256i* dk = reinterpret_cast<__m256i*>(d[k][h]);
            _mm256_store_si256(dk, _mm256_add_epi32(_mm256_load_si256(dk), widen_lanes(a[k][h])));
          }
      }
      avx2::add_group_tokens<kTokens>(
          tasks, g,
          [&](int k, int h) { return _mm256_slli_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(d[k][h])), 1); },
          acc);
    }
  }
  if constexpr (kSteps > 0)
    for (int k = 0; k < kTokens; ++k) avx2::store_out(tasks[k], sums[k]);
  else
    avx2::store_tokens<kTokens>(tasks, acc);
}

// lookup_rows for tasks' group size.
template <int kTokens>
void lookup_rows_of_group(const Vnni4Task* tasks) {
  if (tasks[0].steps_per_group == 8)
    lookup_rows<kTokens, 8>(tasks);
  else
    lookup_rows<kTokens, 0>(tasks);
}

}  // namespace

void int1_lut_tables_avx2(const int8_t* x, int64_t k, uint8_t* out) {
  const __m256i b01 = entry_bits(0), b23 = entry_bits(2);
  for (int64_t u = 0; u < (k + kInt1LutUnitK - 1) / kInt1LutUnitK; ++u, x += kInt1LutUnitK, out += kInt1LutUnitBytes) {
    const __m256i q0 = quad_table(x, b01, b23), q1 = quad_table(x + 4, b01, b23), q2 = quad_table(x + 8, b01, b23),
                  q3 = quad_table(x + 12, b01, b23);
    __m256i* t = reinterpret_cast<__m256i*>(out);
    _mm256_store_si256(t, _mm256_permute2x128_si256(q0, q2, 0x20));      // low bytes, quads 0 | 2
    _mm256_store_si256(t + 1, _mm256_permute2x128_si256(q0, q2, 0x31));  // high bytes
    _mm256_store_si256(t + 2, _mm256_permute2x128_si256(q1, q3, 0x20));  // quads 1 | 3
    _mm256_store_si256(t + 3, _mm256_permute2x128_si256(q1, q3, 0x31));
  }
}

void int1_lut_gemv_avx2(const Vnni4Task& t) { lookup_rows_of_group<1>(&t); }
void int1_lut_tokens_avx2(const Vnni4Task* tasks, int count) {
  avx2::with_token_count<1>(count, [&](auto n) { lookup_rows_of_group<decltype(n)::value>(tasks); });
}

}  // namespace lowbit
