// The table-lookup ternary GEMM (i2s_lut_gemm.h) with 256-bit vectors.
//
// Shapes, per call (rows = 16 x tiles of the range, K = cols):
//   idx    uint8  [blocks][tiles][16][8]   a row's 8 base-3 indices, byte g for table g
//   xt     int16  [blocks * 32][16]        the block of tokens, one column per vector
//   tables int16  [8][81][16]              one block's tables (20.7 KB, stays in L1)
//   acc16  int16  [rows][16]               sums over the blocks since the last widening
//   acc32  int32  [rows][16]               sums over K
// where a block is 32 columns (two I2sTiles lines, 8 groups of 4 columns).
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/aligned_buffer.h"
#include "kernels/i2s_lut_gemm.h"

namespace lowbit {

namespace {

constexpr int kGroupColumns = 4;
constexpr int kEntries = 81;                            // 3^4 index values
constexpr int kBlockGroups = 8;                         // groups per block: 2 lines of 16 columns
constexpr int kBlockColumns = kBlockGroups * kGroupColumns;
constexpr int kEntryBytes = kI2sLutTokens * 2;          // one ymm of int16
constexpr int kTableBytes = kEntries * kEntryBytes;     // 2592
constexpr int kZeroEntry = 40;                          // digits 1111: all weights 0
// A token's int16 sum over the blocks since the last widening is at most the
// sum of its |x| over their columns, at most 32 x 128 = 4096 per block.
constexpr int kMaxBlockAbsSum = kBlockColumns * 128;
static_assert(kMaxBlockAbsSum <= 32767);

template <class T>
T* grow(AlignedBuffer<T>& b, int64_t count) {
  if (static_cast<int64_t>(b.size()) < count) b = AlignedBuffer<T>(static_cast<size_t>(count));
  return b.data();
}

// Per thread: the first prefill of a size allocates, later calls reuse.
struct Scratch {
  AlignedBuffer<uint8_t> idx, widen;
  AlignedBuffer<int8_t> zeros;  // zero-filled, never written
  AlignedBuffer<int16_t> xt, tables, acc16;
  AlignedBuffer<int32_t> acc32;
};

// The 16 rows' indices of one block (32 columns: line0, then line1, which is
// null past the last line) into out[r][8]: byte 4l + j of row r indexes the
// columns 4j .. 4j + 3 of line l. Byte 4r + i of a line half holds, at bits 2j,
// the code (t + 1) of row r and column 4j + i: vpmaddubsw with 1, 3, 9, 27 and
// vpmaddwd with 1 give each 32-bit lane its base-3 index sum_i code_i 3^i.
void block_indices(const uint8_t* line0, const uint8_t* line1, uint8_t* out) {
  const __m256i mask = _mm256_set1_epi8(3), powers = _mm256_set1_epi32(0x1B090301), ones = _mm256_set1_epi16(1);
  // Per 128-bit lane, bytes [j][4 rows] -> [4 rows][j].
  const __m256i rows_first = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,  //
                                              0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const uint8_t* const lines[2] = {line0, line1};
  #pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    __m256i bytes[2];  // [line]: per lane (rows 8h .. 8h+3 | 8h+4 .. 8h+7), 4 rows x 4 indices
    #pragma GCC unroll 2
    for (int l = 0; l < 2; ++l) {
      if (lines[l] == nullptr) {
        bytes[l] = _mm256_set1_epi8(kZeroEntry);
        continue;
      }
      const __m256i half = _mm256_load_si256(reinterpret_cast<const __m256i*>(lines[l] + 32 * h));
      __m256i index[4];  // [j], int32, rows 8h .. 8h + 7
      #pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m256i codes = _mm256_and_si256(_mm256_srli_epi16(half, 2 * j), mask);
        index[j] = _mm256_madd_epi16(_mm256_maddubs_epi16(codes, powers), ones);
      }
      // vpackssdw / vpackuswb work per 128-bit lane: [j][4 rows] bytes in each.
      const __m256i packed = _mm256_packus_epi16(_mm256_packs_epi32(index[0], index[1]),
                                                 _mm256_packs_epi32(index[2], index[3]));
      bytes[l] = _mm256_shuffle_epi8(packed, rows_first);
    }
    // Per lane: rows r, r+1 | r+2, r+3, each line 0's 4 bytes then line 1's.
    const __m256i lo = _mm256_unpacklo_epi32(bytes[0], bytes[1]), hi = _mm256_unpackhi_epi32(bytes[0], bytes[1]);
    uint8_t* o = out + 8 * 8 * h;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 0), _mm256_castsi256_si128(lo));    // rows 0, 1
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 16), _mm256_castsi256_si128(hi));   // rows 2, 3
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 32), _mm256_extracti128_si256(lo, 1));  // rows 4, 5
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 48), _mm256_extracti128_si256(hi, 1));  // rows 6, 7
  }
}

// xt[c][t] = rows[t][c] (int8 -> int16) for 16 columns from c0: a 16 x 16 byte
// transpose by unpacking ever wider units, then a sign extension.
void transpose_columns(const int8_t* const* rows, int64_t c0, int16_t* xt) {
  __m128i a[16], b[16];
  #pragma GCC unroll 16
  for (int t = 0; t < 16; ++t) a[t] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[t] + c0));
  // b[2i] / b[2i+1]: columns 0-7 / 8-15, each 16-bit unit tokens 2i, 2i+1.
  #pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    b[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
    b[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
  }
  // a[4Q + m]: columns 4m .. 4m+3, each 32-bit unit tokens 4Q .. 4Q+3.
  #pragma GCC unroll 4
  for (int quad = 0; quad < 4; ++quad) {
    const __m128i* p = b + 4 * quad;  // pairs 2Q (p[0], p[1]) and 2Q + 1 (p[2], p[3])
    a[4 * quad + 0] = _mm_unpacklo_epi16(p[0], p[2]);
    a[4 * quad + 1] = _mm_unpackhi_epi16(p[0], p[2]);
    a[4 * quad + 2] = _mm_unpacklo_epi16(p[1], p[3]);
    a[4 * quad + 3] = _mm_unpackhi_epi16(p[1], p[3]);
  }
  // b[8h + 2m + s]: columns 4m + 2s, 4m + 2s + 1, each 64-bit unit tokens 8h .. 8h+7.
  #pragma GCC unroll 2
  for (int h = 0; h < 2; ++h)
    #pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      b[8 * h + 2 * m] = _mm_unpacklo_epi32(a[8 * h + m], a[8 * h + 4 + m]);
      b[8 * h + 2 * m + 1] = _mm_unpackhi_epi32(a[8 * h + m], a[8 * h + 4 + m]);
    }
  #pragma GCC unroll 8
  for (int u = 0; u < 8; ++u) {  // columns 2u, 2u + 1
    const __m128i even = _mm_unpacklo_epi64(b[u], b[8 + u]), odd = _mm_unpackhi_epi64(b[u], b[8 + u]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(xt + kI2sLutTokens * (2 * u)), _mm256_cvtepi8_epi16(even));
    _mm256_store_si256(reinterpret_cast<__m256i*>(xt + kI2sLutTokens * (2 * u + 1)), _mm256_cvtepi8_epi16(odd));
  }
}

// Entry v = sum_i (d_i - 1) x_i over the base-3 digits d_i of v (d_0 lowest),
// x_i the 16 tokens' activations of the group's column i. As entry
// 9b + a = low[a] + high[b], with the 9 sums of columns 0, 1 held in registers
// and those of columns 2, 3 made as they are needed: one add and one store per
// entry (the stores bound it).
void build_table(const int16_t* xt, int16_t* table) {
  const auto column = [xt](int i) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(xt + kI2sLutTokens * i)); };
  const __m256i x0 = column(0), x1 = column(1), x2 = column(2), x3 = column(3);
  __m256i low[9];
  low[4] = _mm256_setzero_si256();
  low[5] = x0;
  low[3] = _mm256_sub_epi16(low[4], x0);
  #pragma GCC unroll 3
  for (int d0 = 0; d0 < 3; ++d0) {
    low[d0] = _mm256_sub_epi16(low[3 + d0], x1);
    low[6 + d0] = _mm256_add_epi16(low[3 + d0], x1);
  }
  __m256i* e = reinterpret_cast<__m256i*>(table);
  const __m256i minus_x3 = _mm256_sub_epi16(low[4], x3);
  #pragma GCC unroll 3
  for (int d3 = 0; d3 < 3; ++d3) {
    const __m256i h3 = d3 == 0 ? minus_x3 : d3 == 1 ? low[4] : x3;
    #pragma GCC unroll 3
    for (int d2 = 0; d2 < 3; ++d2) {
      const __m256i high = d2 == 0 ? _mm256_sub_epi16(h3, x2) : d2 == 1 ? h3 : _mm256_add_epi16(h3, x2);
      #pragma GCC unroll 9
      for (int a = 0; a < 9; ++a) _mm256_store_si256(e + 27 * d3 + 9 * d2 + a, _mm256_add_epi16(low[a], high));
    }
  }
}

// widen[b] = 1 where the pass over block b must end by adding acc16 into
// acc32: where the next block could take a token's int16 sum past 32767 (its
// |x| summed over the columns since the last widening), and at the last block.
// Intermediate sums may wrap: int16 adds are exact modulo 2^16, so only each
// widened total must fit. Uniform random activations widen every 16 blocks or
// so, where the worst case (all |x| = 128) needs every 7.
void plan_widening(const int16_t* xt, int64_t blocks, uint8_t* widen) {
  const auto block_sum = [xt](int64_t b) {  // per token, sum of |x| over the block (<= 4096)
    const __m256i* x = reinterpret_cast<const __m256i*>(xt) + b * kBlockColumns;
    __m256i s = _mm256_abs_epi16(x[0]);
    for (int c = 1; c < kBlockColumns; ++c) s = _mm256_add_epi16(s, _mm256_abs_epi16(x[c]));
    return s;
  };
  if (blocks == 0) return;
  const __m256i limit = _mm256_set1_epi16(32767);
  __m256i run = block_sum(0);
  for (int64_t b = 0; b + 1 < blocks; ++b) {
    const __m256i next = block_sum(b + 1);
    // run <= 32767 and next <= kMaxBlockAbsSum: their unsigned sum fits in 16 bits.
    const __m256i total = _mm256_add_epi16(run, next);
    const bool over = _mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_max_epu16(total, limit), limit)) != -1;
    widen[b] = over;
    run = over ? next : total;
  }
  widen[blocks - 1] = 1;
}

// acc16[row] += the entries its 8 indices name, for the 16 rows of one tile
// (idx [16][8]): one vpaddw with a memory operand per 4 weights and 16 tokens.
// A row's indices are one 64-bit word taken apart in registers: byte g rotated
// right by 8g - 5 and masked is already index x 32, the entry's offset (one
// rorx and one and). On Zen 3 with the tables in L1 that ran 0.79 cycles per
// lookup, against 0.84 for shift, mask and shift; 0.99 for a 16-bit load per
// entry; and 0.6 with no indices at all (the loads' bound).
template <bool kWiden>
void tile_lookups(const uint8_t* idx, const char* tables, int16_t* acc16, int32_t* acc32) {
  const auto entry = [tables](uint64_t w, int table) {
    const uint64_t offset = std::rotr(w, (8 * table - 5) & 63) & (0xFFu * kEntryBytes);
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(tables + table * kTableBytes + offset));
  };
  static_assert(kEntryBytes == 32);
  for (int r = 0; r < 16; ++r) {
    __m256i* a = reinterpret_cast<__m256i*>(acc16 + kI2sLutTokens * r);
    uint64_t w;
    std::memcpy(&w, idx + 8 * r, 8);
    __m256i s0 = _mm256_add_epi16(_mm256_load_si256(a), entry(w, 0)), s1 = entry(w, 1);
    s0 = _mm256_add_epi16(s0, entry(w, 2));
    s1 = _mm256_add_epi16(s1, entry(w, 3));
    s0 = _mm256_add_epi16(s0, entry(w, 4));
    s1 = _mm256_add_epi16(s1, entry(w, 5));
    s0 = _mm256_add_epi16(s0, entry(w, 6));
    s1 = _mm256_add_epi16(s1, entry(w, 7));
    const __m256i sum = _mm256_add_epi16(s0, s1);
    if constexpr (kWiden) {
      __m256i* wide = reinterpret_cast<__m256i*>(acc32 + kI2sLutTokens * r);
      _mm256_store_si256(wide, _mm256_add_epi32(_mm256_load_si256(wide),
                                                _mm256_cvtepi16_epi32(_mm256_castsi256_si128(sum))));
      _mm256_store_si256(wide + 1, _mm256_add_epi32(_mm256_load_si256(wide + 1),
                                                    _mm256_cvtepi16_epi32(_mm256_extracti128_si256(sum, 1))));
      _mm256_store_si256(a, _mm256_setzero_si256());
    } else {
      _mm256_store_si256(a, sum);
    }
  }
}

}  // namespace

void i2s_lut_gemm_avx2(const SpannedTiles<I2sTiles>& tiles, int64_t cols, int64_t tile_begin, int64_t tile_end,
                       const int8_t* q, int64_t q_stride, int64_t tokens, I2sLutSink sink) {
  thread_local Scratch s;
  const int64_t n_tiles = tile_end - tile_begin, rows = 16 * n_tiles;
  if (n_tiles <= 0 || tokens <= 0) return;
  const int64_t lines = (cols + I2sTiles::kColumns - 1) / I2sTiles::kColumns;
  const int64_t blocks = (lines + 1) / 2;
  uint8_t* idx = grow(s.idx, blocks * n_tiles * 128);
  int16_t* xt = grow(s.xt, blocks * kBlockColumns * kI2sLutTokens);
  const int8_t* zeros = grow(s.zeros, blocks * kBlockColumns);  // the rows of absent tokens
  int16_t* tables = grow(s.tables, int64_t{kBlockGroups} * kTableBytes / 2);
  int16_t* acc16 = grow(s.acc16, rows * kI2sLutTokens);
  int32_t* acc32 = grow(s.acc32, rows * kI2sLutTokens);
  uint8_t* widen = grow(s.widen, blocks);

  // Indices of every block of the range. Line L of the matrix is line
  // L - first of the span holding it (spans but the last have whole lines),
  // the same in every tile: located once per block.
  struct Line {
    const I2sTiles* span = nullptr;  // null past the last line
    int64_t offset = 0;              // bytes into each of the span's tiles
    const uint8_t* in(int64_t tile) const { return span == nullptr ? nullptr : span->tile(tile) + offset; }
  };
  const auto locate = [&](int64_t l) {
    if (l >= lines) return Line{};
    size_t span = 0;
    while (span + 1 < tiles.spans.size() && tiles.starts[span + 1] / I2sTiles::kColumns <= l) ++span;
    return Line{&tiles.spans[span], I2sTiles::kLineBytes * (l - tiles.starts[span] / I2sTiles::kColumns)};
  };
  for (int64_t b = 0; b < blocks; ++b) {
    const Line line0 = locate(2 * b), line1 = locate(2 * b + 1);
    for (int64_t i = 0; i < n_tiles; ++i)
      block_indices(line0.in(tile_begin + i), line1.in(tile_begin + i), idx + (b * n_tiles + i) * 128);
  }

  const char* table_bytes = reinterpret_cast<const char*>(tables);
  // Every block of tokens ends with a widening pass, which leaves acc16 zero.
  std::memset(acc16, 0, static_cast<size_t>(rows * kI2sLutTokens) * sizeof(int16_t));
  int32_t dots[kI2sLutTokens * 16];
  for (int64_t t0 = 0; t0 < tokens; t0 += kI2sLutTokens) {
    const int n_tok = static_cast<int>(std::min<int64_t>(kI2sLutTokens, tokens - t0));
    // xt[c][t] = q[t0 + t][c]; tokens past the last are zero. Columns up to
    // blocks x 32 <= K rounded up to 64: q's zero padding.
    const int8_t* token_rows[kI2sLutTokens];
    for (int t = 0; t < kI2sLutTokens; ++t) token_rows[t] = t < n_tok ? q + (t0 + t) * q_stride : zeros;
    for (int64_t c = 0; c < blocks * kBlockColumns; c += 16) transpose_columns(token_rows, c, xt + kI2sLutTokens * c);
    plan_widening(xt, blocks, widen);
    std::memset(acc32, 0, static_cast<size_t>(rows * kI2sLutTokens) * sizeof(int32_t));
    for (int64_t b = 0; b < blocks; ++b) {
      for (int g = 0; g < kBlockGroups; ++g)
        build_table(xt + (b * kBlockColumns + g * kGroupColumns) * kI2sLutTokens, tables + g * kTableBytes / 2);
      for (int64_t i = 0; i < n_tiles; ++i) {
        const uint8_t* ix = idx + (b * n_tiles + i) * 128;
        int16_t* a16 = acc16 + 16 * i * kI2sLutTokens;
        int32_t* a32 = acc32 + 16 * i * kI2sLutTokens;
        if (widen[b])
          tile_lookups<true>(ix, table_bytes, a16, a32);
        else
          tile_lookups<false>(ix, table_bytes, a16, a32);
      }
    }
    for (int64_t i = 0; i < n_tiles; ++i) {
      const int32_t* a = acc32 + 16 * i * kI2sLutTokens;  // [row][token]
      for (int t = 0; t < n_tok; ++t)
        for (int r = 0; r < 16; ++r) dots[16 * t + r] = a[kI2sLutTokens * r + t];
      sink(tile_begin + i, t0, n_tok, dots);
    }
  }
}

}  // namespace lowbit
