// The body of FloatTileDots (float_tile_dots.h), written once over a lane type
// S (x86_avx2/simd_avx2.h, x86_avx512/simd_avx512.h) and a weight reader.
#pragma once

#include <cstdint>

#include "kernels/float_tile_dots.h"
#include "kernels/read_streams.h"
// The block formats' unpackers are AVX2 integer code; NEON builds (arm_neon/)
// have the signed super-blocks' (Q6_K, Q3_K, IQ4_XS: signed_k_values_neon.h)
// and leave the rest to other kernels.
#if defined(__AVX2__)
#include "kernels/simd_k_quant_body.h"
#include "kernels/simd_q2_k_body.h"
#include "kernels/simd_q4_1_body.h"
#endif
#if defined(__AVX2__) || defined(__ARM_NEON)
#include "kernels/simd_signed_k_body.h"
#endif

namespace lowbit::simd {

// Weight readers: kLanes values of a row as floats (partial: the first n, rest 0).
template <class S>
struct F32Row {
  static constexpr int kValueBytes = 4;
  static typename S::V load(const uint8_t* row, int64_t k) { return S::load(reinterpret_cast<const float*>(row) + k); }
  static typename S::V load_partial(const uint8_t* row, int64_t k, int64_t n) {
    return S::load_partial(reinterpret_cast<const float*>(row) + k, n);
  }
};
template <class S>
struct F16Row {
  static constexpr int kValueBytes = 2;
  static typename S::V load(const uint8_t* row, int64_t k) { return S::load_f16(reinterpret_cast<const uint16_t*>(row) + k); }
  static typename S::V load_partial(const uint8_t* row, int64_t k, int64_t n) {
    return S::load_f16_partial(reinterpret_cast<const uint16_t*>(row) + k, n);
  }
};
template <class S>
struct Bf16Row {
  static constexpr int kValueBytes = 2;
  static typename S::V load(const uint8_t* row, int64_t k) { return S::load_bf16(reinterpret_cast<const uint16_t*>(row) + k); }
  static typename S::V load_partial(const uint8_t* row, int64_t k, int64_t n) {
    return S::load_bf16_partial(reinterpret_cast<const uint16_t*>(row) + k, n);
  }
};

// How far ahead a one-token row read alone prefetches, where kPrefetch is on
// (float_tile_dots.h's FloatPrefetch). On Zen 5 the hardware prefetcher alone left the
// F16 head at 64-72% of the 2-thread read bandwidth; with this, 2B-4T decode
// (656 MB of F16 head per token) ran 10-31% faster at 2 threads and 6-20% at 1
// (two sets of alternated runs; 2-6 KiB alike, 8 KiB a little slower). On a
// 16-core Intel Xeon the same made it 12-35% slower (docs/performance.md
// "Session 8").
inline constexpr int64_t kFloatPrefetchBytes = 4096;

// Where kPrefetch is on, one token reads kFloatStreams rows at once, each from
// its own quarter of the rows a call gets (a chunk of ~20 MB of the head;
// quarters of at least kStreamsMinApartBytes), and prefetches
// kFloatStreamPrefetchBytes ahead in each. On Zen 5 one core keeps
// more reads in flight over four distant streams than over one: a plain read
// went 35.6 -> 40.3 GB/s at 1 thread with four, and the F16 head 33.0 ->
// 38.6 GB/s at 1 thread, 58-60 -> 60-62 at 2 (docs/performance.md
// "Session 11"). Each row is summed exactly as when read alone (the same 4
// accumulators in the same order), so the result does not depend on how rows
// are grouped into calls.
inline constexpr int kFloatStreams = 4;
inline constexpr int64_t kFloatStreamPrefetchBytes = 1024;

// kRows x kTokens dots; kSplit accumulators per dot break the FMA latency
// chain when there are few dots (a GEMV).
// __builtin_prefetch's locality for a hint: 0 prefetchnta, 2 prefetcht1.
constexpr int prefetch_locality(FloatPrefetch p) { return p == FloatPrefetch::ToL2 ? 2 : 0; }

template <class S, class Row, int kRows, int kTokens, int kSplit, FloatPrefetch kPrefetch = FloatPrefetch::None>
void float_tile(const uint8_t* w, int64_t row_bytes, const float* x, int64_t x_stride, int64_t k, float* y,
                int64_t y_stride) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  V acc[kSplit][kRows][kTokens];
  #pragma GCC unroll 64
  for (int s = 0; s < kSplit; ++s)
    #pragma GCC unroll 64
    for (int r = 0; r < kRows; ++r)
      #pragma GCC unroll 64
      for (int t = 0; t < kTokens; ++t) acc[s][r][t] = S::zero();
  // One row, one token (a GEMV: one sequential stream): software prefetch
  // kFloatPrefetchBytes ahead, one per 64-byte line.
  static_assert(kPrefetch == FloatPrefetch::None || (kRows == 1 && kTokens == 1));
  // A constant even at -O0 (__builtin_prefetch's locality must be one).
  static constexpr int kLocality = prefetch_locality(kPrefetch);
  constexpr int kStepBytes = kSplit * L * Row::kValueBytes;
  int64_t i = 0;
  for (; i + kSplit * L <= k; i += kSplit * L) {
    if constexpr (kPrefetch != FloatPrefetch::None) {
      #pragma GCC unroll 8
      for (int b = 0; b < kStepBytes; b += 64)
        __builtin_prefetch(w + i * Row::kValueBytes + kFloatPrefetchBytes + b, 0, kLocality);
    }
    #pragma GCC unroll 64
    for (int s = 0; s < kSplit; ++s) {
      V xv[kTokens];
      #pragma GCC unroll 64
      for (int t = 0; t < kTokens; ++t) xv[t] = S::load(x + t * x_stride + i + s * L);
      #pragma GCC unroll 64
      for (int r = 0; r < kRows; ++r) {
        const V wv = Row::load(w + r * row_bytes, i + s * L);
        #pragma GCC unroll 64
        for (int t = 0; t < kTokens; ++t) acc[s][r][t] = S::fmadd(wv, xv[t], acc[s][r][t]);
      }
    }
  }
  for (; i < k; i += L) {
    const int64_t n = k - i < L ? k - i : L;
    V xv[kTokens];
    #pragma GCC unroll 64
    for (int t = 0; t < kTokens; ++t)
      xv[t] = n == L ? S::load(x + t * x_stride + i) : S::load_partial(x + t * x_stride + i, n);
    #pragma GCC unroll 64
    for (int r = 0; r < kRows; ++r) {
      const V wv = n == L ? Row::load(w + r * row_bytes, i) : Row::load_partial(w + r * row_bytes, i, n);
      #pragma GCC unroll 64
      for (int t = 0; t < kTokens; ++t) acc[0][r][t] = S::fmadd(wv, xv[t], acc[0][r][t]);
    }
  }
  #pragma GCC unroll 64
  for (int r = 0; r < kRows; ++r)
    #pragma GCC unroll 64
    for (int t = 0; t < kTokens; ++t) {
      V sum = acc[0][r][t];
      #pragma GCC unroll 64
      for (int s = 1; s < kSplit; ++s) sum = S::add(sum, acc[s][r][t]);
      y[t * y_stride + r] = S::reduce_add(sum);
    }
}

// kTokens tokens, kStreams rows at a time: row j * per + r for stream j, r in
// [0, per), each prefetched kFloatStreamPrefetchBytes ahead (a line every 64
// bytes). Per (row, token) exactly float_tile<S, Row, 1, kTokens, kSplit>'s
// arithmetic: one token takes kSplit 4 (the GEMV's), 2 to 4 tokens kSplit 1
// (the tiles').
template <class S, class Row, int kStreams, int kTokens, int kSplit, FloatPrefetch kPrefetch>
void float_row_streams(const uint8_t* w, int64_t row_bytes, int64_t per, const float* x, int64_t x_stride, int64_t k,
                       float* y, int64_t y_stride) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  constexpr int kStepBytes = kSplit * L * Row::kValueBytes;
  static_assert(kStepBytes % 64 == 0 || 64 % kStepBytes == 0);
  static constexpr int kLocality = prefetch_locality(kPrefetch);
  for (int64_t r = 0; r < per; ++r) {
    const uint8_t* row[kStreams];
    #pragma GCC unroll 8
    for (int j = 0; j < kStreams; ++j) row[j] = w + (j * per + r) * row_bytes;
    V acc[kStreams][kSplit][kTokens];
    #pragma GCC unroll 8
    for (int j = 0; j < kStreams; ++j)
      #pragma GCC unroll 4
      for (int s = 0; s < kSplit; ++s)
        #pragma GCC unroll 4
        for (int t = 0; t < kTokens; ++t) acc[j][s][t] = S::zero();
    int64_t i = 0;
    for (; i + kSplit * L <= k; i += kSplit * L) {
      if (kStepBytes >= 64 || ((i * Row::kValueBytes) & 63) == 0) {
        #pragma GCC unroll 8
        for (int j = 0; j < kStreams; ++j)
          #pragma GCC unroll 4
          for (int b = 0; b < kStepBytes; b += 64)
            __builtin_prefetch(row[j] + i * Row::kValueBytes + kFloatStreamPrefetchBytes + b, 0, kLocality);
      }
      #pragma GCC unroll 4
      for (int s = 0; s < kSplit; ++s) {
        V xv[kTokens];
        #pragma GCC unroll 4
        for (int t = 0; t < kTokens; ++t) xv[t] = S::load(x + t * x_stride + i + s * L);
        #pragma GCC unroll 8
        for (int j = 0; j < kStreams; ++j) {
          const V wv = Row::load(row[j], i + s * L);
          #pragma GCC unroll 4
          for (int t = 0; t < kTokens; ++t) acc[j][s][t] = S::fmadd(wv, xv[t], acc[j][s][t]);
        }
      }
    }
    for (; i < k; i += L) {
      const int64_t n = k - i < L ? k - i : L;
      V xv[kTokens];
      #pragma GCC unroll 4
      for (int t = 0; t < kTokens; ++t)
        xv[t] = n == L ? S::load(x + t * x_stride + i) : S::load_partial(x + t * x_stride + i, n);
      #pragma GCC unroll 8
      for (int j = 0; j < kStreams; ++j) {
        const V wv = n == L ? Row::load(row[j], i) : Row::load_partial(row[j], i, n);
        #pragma GCC unroll 4
        for (int t = 0; t < kTokens; ++t) acc[j][0][t] = S::fmadd(wv, xv[t], acc[j][0][t]);
      }
    }
    #pragma GCC unroll 8
    for (int j = 0; j < kStreams; ++j)
      #pragma GCC unroll 4
      for (int t = 0; t < kTokens; ++t) {
        V sum = acc[j][0][t];
        #pragma GCC unroll 4
        for (int s = 1; s < kSplit; ++s) sum = S::add(sum, acc[j][s][t]);
        y[t * y_stride + j * per + r] = S::reduce_add(sum);
      }
  }
}

// The rows float_row_streams took (0 when the call's rows are too few for
// streams kStreamsMinApartBytes apart).
template <class S, class Row, int kStreams, int kTokens, int kSplit, FloatPrefetch kPrefetch>
int64_t streamed_rows(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride, int64_t k,
                      float* y, int64_t y_stride) {
  const int64_t per = rows / kStreams;
  if (per == 0 || per * row_bytes < kStreamsMinApartBytes) return 0;
  float_row_streams<S, Row, kStreams, kTokens, kSplit, kPrefetch>(w, row_bytes, per, x, x_stride, k, y, y_stride);
  return per * kStreams;
}

// One token (a GEMV): row by row with 4 accumulators, or (prefetch on) four
// rows a quarter of the call's rows apart at once. Four neighbouring rows at
// once had run at ~70% of the read bandwidth on one core, one row at a time at
// ~93%: the streams gain only when far apart (1 thread, against one row at a
// time: 4 rows apart 9% slower, 256 rows apart 9% faster, 1000 rows apart
// 14-17% faster). Several tokens: 4 x 4 tiles, each weight vector converted
// once for 4 tokens; with prefetch on, 2 to 4 tokens read distant rows as one
// token does (4 streams; 2 for 3 or 4 tokens in 16 ymm registers). On an
// AVX2 Zen 3 that took the 2B-4T F16 head, 2 / 4 sequences decoding together,
// from 68-72% / 57-60% to 96-97% / 77-79% of the read bandwidth (builds
// alternated; docs/performance.md "Session 14"). 4 adjacent rows with a
// prefetch each were no faster, 2 adjacent rows slower.
//
// With 16 vector registers (AVX2) a 4 x 4 tile's 16 accumulators, 4 token
// vectors and a weight vector do not fit, and the spills cost a third: 4 rows
// x 4 tokens ran at 0.88 cycles per 8 weight-tokens on the Zen 3, 4 x 3 at
// 0.59 (a tile in L1). Four tokens there go as 3, then 1; each (row, token)
// keeps the same arithmetic, so the results are the same bits.
template <class S, class Row, int kRows>
void float_tile_tokens(const uint8_t* w, int64_t row_bytes, const float* x, int64_t x_stride, int tokens, int64_t k,
                       float* y, int64_t y_stride) {
  constexpr bool kFourFit = kRows * 4 + 4 + 1 <= (S::kLanes > 8 ? 32 : 16);
  switch (tokens) {
    case 2: return float_tile<S, Row, kRows, 2, 1>(w, row_bytes, x, x_stride, k, y, y_stride);
    case 3: return float_tile<S, Row, kRows, 3, 1>(w, row_bytes, x, x_stride, k, y, y_stride);
    default:
      if constexpr (kFourFit) return float_tile<S, Row, kRows, 4, 1>(w, row_bytes, x, x_stride, k, y, y_stride);
      float_tile<S, Row, kRows, 3, 1>(w, row_bytes, x, x_stride, k, y, y_stride);
      return float_tile<S, Row, kRows, 1, 1>(w, row_bytes, x + 3 * x_stride, x_stride, k, y + 3 * y_stride, y_stride);
  }
}

template <class S, class Row, FloatPrefetch kPrefetch>
void float_tile_dots(const uint8_t* w, int64_t row_bytes, int rows, const float* x, int64_t x_stride,
                     const float* /* xsum */, int tokens, int64_t k, float* y, int64_t y_stride) {
  int64_t r = 0;
  if constexpr (kPrefetch != FloatPrefetch::None) {
    constexpr int kWide = S::kLanes > 8 ? 4 : 2;  // streams for 3 or 4 tokens
    constexpr FloatPrefetch P = kPrefetch;
    switch (tokens) {
      case 1: r = streamed_rows<S, Row, kFloatStreams, 1, 4, P>(w, row_bytes, rows, x, x_stride, k, y, y_stride); break;
      case 2: r = streamed_rows<S, Row, 4, 2, 1, P>(w, row_bytes, rows, x, x_stride, k, y, y_stride); break;
      case 3: r = streamed_rows<S, Row, kWide, 3, 1, P>(w, row_bytes, rows, x, x_stride, k, y, y_stride); break;
      case 4: r = streamed_rows<S, Row, kWide, 4, 1, P>(w, row_bytes, rows, x, x_stride, k, y, y_stride); break;
      default: break;
    }
  }
  if (tokens == 1) {
    for (; r < rows; ++r)
      float_tile<S, Row, 1, 1, 4, kPrefetch>(w + r * row_bytes, row_bytes, x, x_stride, k, y + r, y_stride);
    return;
  }
  for (; r + kFloatTileRows <= rows; r += kFloatTileRows)
    float_tile_tokens<S, Row, kFloatTileRows>(w + r * row_bytes, row_bytes, x, x_stride, tokens, k, y + r, y_stride);
  for (; r < rows; ++r)
    float_tile_tokens<S, Row, 1>(w + r * row_bytes, row_bytes, x, x_stride, tokens, k, y + r, y_stride);
}

// The float rows' kernel for a hint.
template <class S, class Row>
FloatTileDots float_rows_dots(FloatPrefetch prefetch) {
  switch (prefetch) {
    case FloatPrefetch::NonTemporal: return float_tile_dots<S, Row, FloatPrefetch::NonTemporal>;
    case FloatPrefetch::ToL2: return float_tile_dots<S, Row, FloatPrefetch::ToL2>;
    default: return float_tile_dots<S, Row, FloatPrefetch::None>;
  }
}

template <class S>
FloatTileDots float_tile_dots_for(GgmlType type, FloatPrefetch prefetch) {
  switch (type) {
    case GgmlType::F32: return float_rows_dots<S, F32Row<S>>(prefetch);
    case GgmlType::F16: return float_rows_dots<S, F16Row<S>>(prefetch);
    case GgmlType::BF16: return float_rows_dots<S, Bf16Row<S>>(prefetch);
#if defined(__AVX2__)
    case GgmlType::Q4_1: return q4_1_tile_dots<S, Q4_1Values>;
    case GgmlType::Q5_0: return q4_1_tile_dots<S, Q5_0Values>;
    case GgmlType::Q5_1: return q4_1_tile_dots<S, Q5_1Values>;
    case GgmlType::Q2_K: return q2_k_tile_dots<S>;
    case GgmlType::Q4_K: return k_quant_tile_dots<S, Q4KValues>;
    case GgmlType::Q5_K: return k_quant_tile_dots<S, Q5KValues>;
#endif
#if defined(__AVX2__) || defined(__ARM_NEON)
    case GgmlType::Q3_K: return signed_k_tile_dots<S, Q3KValues>;
    case GgmlType::Q6_K: return signed_k_tile_dots<S, Q6KValues>;
    case GgmlType::IQ4_XS: return signed_k_tile_dots<S, Iq4XsValues>;
#endif
    default: return nullptr;
  }
}

// F32 / F16 / BF16 rows into floats (exact; k values: blocks of 1), for
// the many-token panels (simd_float_panel_body.h).
template <class S, class Row>
void float_row_to_floats(const uint8_t* row, int64_t k, float* out) {
  constexpr int L = S::kLanes;
  int64_t i = 0;
  for (; i + L <= k; i += L) S::store(out + i, Row::load(row, i));
  if (i < k) S::store_partial(out + i, Row::load_partial(row, i, k - i), k - i);
}

template <class S>
FloatRowDequantize float_row_dequantize_for(GgmlType type) {
  switch (type) {
    case GgmlType::F32: return float_row_to_floats<S, F32Row<S>>;
    case GgmlType::F16: return float_row_to_floats<S, F16Row<S>>;
    case GgmlType::BF16: return float_row_to_floats<S, Bf16Row<S>>;
#if defined(__AVX2__)
    case GgmlType::Q4_1: return q4_1_dequantize<S, Q4_1Values>;
    case GgmlType::Q5_0: return q4_1_dequantize<S, Q5_0Values>;
    case GgmlType::Q5_1: return q4_1_dequantize<S, Q5_1Values>;
    case GgmlType::Q2_K: return q2_k_dequantize<S>;
    case GgmlType::Q4_K: return k_quant_dequantize<S, Q4KValues>;
    case GgmlType::Q5_K: return k_quant_dequantize<S, Q5KValues>;
#endif
#if defined(__AVX2__) || defined(__ARM_NEON)
    case GgmlType::Q3_K: return signed_k_dequantize<S, Q3KValues>;
    case GgmlType::Q6_K: return signed_k_dequantize<S, Q6KValues>;
    case GgmlType::IQ4_XS: return signed_k_dequantize<S, Iq4XsValues>;
#endif
    default: return nullptr;
  }
}

}  // namespace lowbit::simd
