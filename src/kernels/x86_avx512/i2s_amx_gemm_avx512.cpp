// I2sTiles x int8 activations on AMX: tdpbsud (signed activations x unsigned
// codes). See kernels/i2s_amx_gemm.h.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "core/aligned_buffer.h"
#include "kernels/i2s_amx_gemm.h"
#include "kernels/x86_avx512/amx_tile_config.h"

// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here reads them.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lowbit {

namespace {

constexpr int kBlockColumns = 64;  // columns per tile dot: 16 quads x 4
constexpr int kLinesPerBlock = kBlockColumns / I2sTiles::kColumns;
constexpr int kTileBytes = 1024;   // 16 rows x 64 bytes
// K goes in slices of this many 64-column blocks: a slice of two weight
// tiles' unpacked codes (16 KB) stays in L1 while every token block of the
// chunk passes, and the int32 sums go to memory between slices. Slices of 4,
// 10, 12 or 16 blocks ran 5-25% slower than 8 (bench/prefill_gemm_bench.cpp).
// (Whole rows of K with the sums kept in tile registers and the codes read
// from L2 ran 25% slower than slices, though a loop of the same loads and
// dots alone runs as fast from L2 as from L1: docs/performance.md, "Session 29".)
constexpr int64_t kSliceBlocks = 8;
// Tokens go in chunks whose activations stay in L2 (about this many bytes)
// while every weight tile of the call passes over them: the 2B-4T down matrix
// (K = 6912) with 512 tokens at once ran at 19% of the tile peak, its 3.5 MB
// of activations read from L3 for every pair of weight tiles; in 1 MB chunks
// at 31% (512 KB: 30%, 256 KB: 25%).
constexpr int64_t kChunkBytes = int64_t{1} << 20;

// One 64-column block of a weight tile's codes as a B tile (16 rows of 64
// bytes: row i = columns 4i .. 4i + 3 of the 16 weight rows).
template <int64_t kAhead = 0>
inline void unpack_block(const uint8_t* tile, int64_t groups, int64_t b, uint8_t* out) {
  const __m512i mask = _mm512_set1_epi8(3);
  for (int l = 0; l < kLinesPerBlock; ++l) {
    const int64_t g = b * kLinesPerBlock + l;
    if constexpr (kAhead > 0) _mm_prefetch(reinterpret_cast<const char*>(tile + 64 * g) + kAhead, _MM_HINT_T0);
    const __m512i line = g < groups ? _mm512_load_si512(tile + 64 * g) : _mm512_setzero_si512();
    uint8_t* row = out + 4 * l * 64;
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) _mm512_store_si512(row + 64 * j, _mm512_and_si512(_mm512_srli_epi16(line, 2 * j), mask));
  }
}

// The code lines of the next slice, fetched a few per step of the tile dots
// while the slice before them is multiplied: without it, a prefill's GEMM
// spent about a quarter of its time waiting for codes from memory, and
// fetching them in one burst as a slice is unpacked stalled on the core's
// outstanding misses.
struct CodesAhead {
  const uint8_t* lines[2 * kSliceBlocks * kLinesPerBlock];
  int count = 0, next = 0, per_step = 0;
};

// C[2i + j] += A_i . B_j over the slice's n blocks: kA token blocks (tile
// rows a[i], kTileBytes per block) x kB weight tiles (unpacked codes
// b[j], kTileBytes per block). Each A and B tile loaded serves two tile dots.
template <int kA, int kB>
inline void slice_dots(const int8_t* const* a, int64_t n, const uint8_t* const* b, CodesAhead& ahead) {
  for (int64_t f = 0; f < n; ++f) {
    for (int i = 0; i < ahead.per_step && ahead.next < ahead.count; ++i)
      _mm_prefetch(reinterpret_cast<const char*>(ahead.lines[ahead.next++]), _MM_HINT_T0);
    _tile_loadd(6, b[0] + f * kTileBytes, 64);
    if constexpr (kB > 1) _tile_loadd(7, b[1] + f * kTileBytes, 64);
    _tile_loadd(4, a[0] + f * kTileBytes, 64);
    _tile_dpbsud(0, 4, 6);
    if constexpr (kB > 1) _tile_dpbsud(1, 4, 7);
    if constexpr (kA > 1) {
      _tile_loadd(5, a[1] + f * kTileBytes, 64);
      _tile_dpbsud(2, 5, 6);
      if constexpr (kB > 1) _tile_dpbsud(3, 5, 7);
    }
  }
}

template <int kA, int kB>
inline void load_c(const int32_t* c, bool zero) {
  if (zero) {
    _tile_zero(0);
    if constexpr (kB > 1) _tile_zero(1);
    if constexpr (kA > 1) _tile_zero(2);
    if constexpr (kA > 1 && kB > 1) _tile_zero(3);
  } else {
    _tile_loadd(0, c, 64);
    if constexpr (kB > 1) _tile_loadd(1, c + 256, 64);
    if constexpr (kA > 1) _tile_loadd(2, c + 512, 64);
    if constexpr (kA > 1 && kB > 1) _tile_loadd(3, c + 768, 64);
  }
}
template <int kA, int kB>
inline void store_c(int32_t* c) {
  _tile_stored(0, c, 64);
  if constexpr (kB > 1) _tile_stored(1, c + 256, 64);
  if constexpr (kA > 1) _tile_stored(2, c + 512, 64);
  if constexpr (kA > 1 && kB > 1) _tile_stored(3, c + 768, 64);
}

// One block of tokens (7 to 16: sequences decoding together, a short
// prompt) reuses no unpacked codes, so it takes no slices: three weight tiles
// at a time keep their sums in tile registers over the whole of K, each
// 64-column block's codes unpacked into a small ring in L1 just before its
// dots, and the codes' lines prefetched kLoneAhead bytes ahead in each
// tile's stream (instead of the next slice's a few per step). A tile of
// activations loaded serves three dots (two in the slices), and no sums go
// to memory between slices. 16 sequences decoding together: the ternary
// matrices read 16.4-18.3 GB/s where the slices read 13.5-16 (2 threads),
// and 17.3-21.9 with the prefetch (512-1024 bytes alike, 2048 less;
// docs/performance.md "Session 36").
constexpr int kLoneTiles = 3;
constexpr int64_t kLoneRing = 4;  // blocks of unpacked codes kept (kLoneTiles tiles each)
constexpr int64_t kLoneAhead = 1024;

// Tile registers: C 0..2 (the weight tiles' sums), A 3 (the activations),
// B 4..6 (the codes).
template <int kB>
void lone_dots(const SpannedTiles<I2sTiles>& tiles, int64_t t, const int8_t* tile_rows, const int64_t* span_of,
               const int64_t* block_of, int64_t F, uint8_t* ring, int32_t* out) {
  _tile_zero(0);
  if constexpr (kB > 1) _tile_zero(1);
  if constexpr (kB > 2) _tile_zero(2);
  for (int64_t f = 0; f < F; ++f) {
    const I2sTiles& span = tiles.spans[static_cast<size_t>(span_of[f])];
    uint8_t* const b = ring + f % kLoneRing * kLoneTiles * kTileBytes;
    for (int j = 0; j < kB; ++j) unpack_block<kLoneAhead>(span.tile(t + j), span.groups, block_of[f], b + j * kTileBytes);
    _tile_loadd(3, tile_rows + f * kTileBytes, 64);
    _tile_loadd(4, b, 64);
    _tile_dpbsud(0, 3, 4);
    if constexpr (kB > 1) {
      _tile_loadd(5, b + kTileBytes, 64);
      _tile_dpbsud(1, 3, 5);
    }
    if constexpr (kB > 2) {
      _tile_loadd(6, b + 2 * kTileBytes, 64);
      _tile_dpbsud(2, 3, 6);
    }
  }
  _tile_stored(0, out, 64);
  if constexpr (kB > 1) _tile_stored(1, out + 256, 64);
  if constexpr (kB > 2) _tile_stored(2, out + 512, 64);
}

// Two blocks of tokens (17 to 32) the same way, two weight tiles at a time:
// C 0..3 (block i, tile j in 2i + j), A 4 and 5, B 6 and 7, each tile loaded
// serving two dots, as in the slices. 20 / 24 / 32 sequences decoding
// together ran 17-21% / 24-27% / 14-24% faster than in the slices (2
// threads); three or more blocks, taken two at a time this way (the codes
// unpacked once per pair of blocks), ran 5-10% slower than the slices at
// 48-96 tokens (docs/performance.md "Session 36").
template <int kB>
void two_block_dots(const SpannedTiles<I2sTiles>& tiles, int64_t t, const int8_t* tile_rows, const int64_t* span_of,
                    const int64_t* block_of, int64_t F, uint8_t* ring, int32_t* out) {
  _tile_zero(0);
  if constexpr (kB > 1) _tile_zero(1);
  _tile_zero(2);
  if constexpr (kB > 1) _tile_zero(3);
  for (int64_t f = 0; f < F; ++f) {
    const I2sTiles& span = tiles.spans[static_cast<size_t>(span_of[f])];
    uint8_t* const b = ring + f % kLoneRing * kLoneTiles * kTileBytes;
    for (int j = 0; j < kB; ++j) unpack_block<kLoneAhead>(span.tile(t + j), span.groups, block_of[f], b + j * kTileBytes);
    _tile_loadd(6, b, 64);
    if constexpr (kB > 1) _tile_loadd(7, b + kTileBytes, 64);
    _tile_loadd(4, tile_rows + f * kTileBytes, 64);
    _tile_dpbsud(0, 4, 6);
    if constexpr (kB > 1) _tile_dpbsud(1, 4, 7);
    _tile_loadd(5, tile_rows + (F + f) * kTileBytes, 64);
    _tile_dpbsud(2, 5, 6);
    if constexpr (kB > 1) _tile_dpbsud(3, 5, 7);
  }
  _tile_stored(0, out, 64);
  if constexpr (kB > 1) _tile_stored(1, out + 256, 64);
  _tile_stored(2, out + 512, 64);
  if constexpr (kB > 1) _tile_stored(3, out + 768, 64);
}

}  // namespace

void i2s_amx_gemm(const SpannedTiles<I2sTiles>& tiles, int64_t tile_begin, int64_t tile_end, const int8_t* tile_rows,
                  int64_t tokens, I2sAmxSink sink) {
  if (tile_begin >= tile_end || tokens <= 0) return;
  // The span and block of each column block (tile_rows' order). Per-thread
  // scratch, grown on first use.
  thread_local std::vector<int64_t> span_of, block_of;
  span_of.clear(), block_of.clear();
  for_each_i2s_amx_block(tiles, [&](int64_t, int64_t span, int64_t block) {
    span_of.push_back(span);
    block_of.push_back(block);
  });
  const auto F = static_cast<int64_t>(span_of.size());
  const int64_t n_blocks = (tokens + kI2sAmxTokens - 1) / kI2sAmxTokens;
  // One or two token blocks: no slices (lone_dots, two_block_dots).
  if (n_blocks <= 2) {
    thread_local AlignedBuffer<uint8_t> ring;
    if (ring.size() < static_cast<size_t>(kLoneRing * kLoneTiles * kTileBytes))
      ring = AlignedBuffer<uint8_t>(kLoneRing * kLoneTiles * kTileBytes);
    alignas(64) int32_t out[4 * 256];
    const AmxTileConfig config = amx_tiles_16x64();
    _tile_loadconfig(&config);
    const int64_t step = n_blocks == 1 ? kLoneTiles : 2;
    for (int64_t t = tile_begin; t < tile_end; t += step) {
      const int kB = static_cast<int>(std::min<int64_t>(step, tile_end - t));
      const int64_t* so = span_of.data();
      const int64_t* bo = block_of.data();
      if (n_blocks == 2) {
        if (kB == 2)
          two_block_dots<2>(tiles, t, tile_rows, so, bo, F, ring.data(), out);
        else
          two_block_dots<1>(tiles, t, tile_rows, so, bo, F, ring.data(), out);
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < kB; ++j) {
            const int64_t t0 = i * kI2sAmxTokens;
            sink(t + j, t0, static_cast<int>(std::min<int64_t>(kI2sAmxTokens, tokens - t0)), out + (2 * i + j) * 256);
          }
        continue;
      }
      if (kB == 3)
        lone_dots<3>(tiles, t, tile_rows, so, bo, F, ring.data(), out);
      else if (kB == 2)
        lone_dots<2>(tiles, t, tile_rows, so, bo, F, ring.data(), out);
      else
        lone_dots<1>(tiles, t, tile_rows, so, bo, F, ring.data(), out);
      for (int j = 0; j < kB; ++j) sink(t + j, 0, static_cast<int>(tokens), out + j * 256);
    }
    _tile_release();
    return;
  }
  // Unpacked codes of a slice of two weight tiles; partial sums per token
  // block and tile of the pair.
  thread_local AlignedBuffer<uint8_t> codes;
  thread_local AlignedBuffer<int32_t> partial;
  if (codes.size() < static_cast<size_t>(2 * kSliceBlocks * kTileBytes)) codes = AlignedBuffer<uint8_t>(2 * kSliceBlocks * kTileBytes);
  const int64_t chunk_blocks = std::max<int64_t>(2, kChunkBytes / (F * kTileBytes) / 2 * 2);
  const auto partial_size = static_cast<size_t>((std::min(n_blocks, chunk_blocks) + 1) / 2 * 1024);
  if (partial.size() < partial_size) partial = AlignedBuffer<int32_t>(partial_size);
  alignas(64) int32_t out[1024];

  // Tile registers: C (int32 sums) 0..3, A (activations) 4 and 5, B (codes) 6 and 7.
  const AmxTileConfig config = amx_tiles_16x64();
  _tile_loadconfig(&config);
  for (int64_t c0 = 0; c0 < n_blocks; c0 += chunk_blocks) {
    const int64_t c_end = std::min(n_blocks, c0 + chunk_blocks);
    for (int64_t t = tile_begin; t < tile_end; t += 2) {
      const int kB = t + 1 < tile_end ? 2 : 1;
      const uint8_t* b[2] = {codes.data(), codes.data() + kSliceBlocks * kTileBytes};
      for (int64_t f0 = 0; f0 < F; f0 += kSliceBlocks) {
        const int64_t n = std::min(kSliceBlocks, F - f0);
        for (int j = 0; j < kB; ++j)
          for (int64_t f = 0; f < n; ++f) {
            const I2sTiles& span = tiles.spans[static_cast<size_t>(span_of[f0 + f])];
            unpack_block(span.tile(t + j), span.groups, block_of[f0 + f],
                         codes.data() + (j * kSliceBlocks + f) * kTileBytes);
          }
        // The slice after this one: the next K slice of these tiles, or the first of the next pair.
        CodesAhead ahead;
        const int64_t next_f0 = f0 + n < F ? f0 + n : 0, next_t = f0 + n < F ? t : t + 2;
        for (int j = 0; j < 2 && next_t + j < tile_end; ++j)
          for (int64_t f = next_f0; f < std::min(F, next_f0 + kSliceBlocks); ++f) {
            const I2sTiles& s = tiles.spans[static_cast<size_t>(span_of[f])];
            for (int l = 0; l < kLinesPerBlock; ++l)
              if (const int64_t g = block_of[f] * kLinesPerBlock + l; g < s.groups)
                ahead.lines[ahead.count++] = s.tile(next_t + j) + 64 * g;
          }
        const int64_t steps = (c_end - c0 + 1) / 2 * n;
        ahead.per_step = static_cast<int>((ahead.count + steps - 1) / steps);
        const bool first = f0 == 0, last = f0 + n == F;
        for (int64_t b0 = c0; b0 < c_end; b0 += 2) {
          const int kA = b0 + 1 < c_end ? 2 : 1;
          const int8_t* a[2];
          for (int i = 0; i < kA; ++i) a[i] = tile_rows + ((b0 + i) * F + f0) * kTileBytes;
          int32_t* c = partial.data() + (b0 - c0) / 2 * 1024;
          int32_t* dst = last ? out : c;
          if (kA == 2 && kB == 2) {
            load_c<2, 2>(c, first), slice_dots<2, 2>(a, n, b, ahead), store_c<2, 2>(dst);
          } else if (kA == 2) {
            load_c<2, 1>(c, first), slice_dots<2, 1>(a, n, b, ahead), store_c<2, 1>(dst);
          } else if (kB == 2) {
            load_c<1, 2>(c, first), slice_dots<1, 2>(a, n, b, ahead), store_c<1, 2>(dst);
          } else {
            load_c<1, 1>(c, first), slice_dots<1, 1>(a, n, b, ahead), store_c<1, 1>(dst);
          }
          if (last)
            for (int i = 0; i < kA; ++i)
              for (int j = 0; j < kB; ++j) {
                const int64_t t0 = (b0 + i) * kI2sAmxTokens;
                sink(t + j, t0, static_cast<int>(std::min<int64_t>(kI2sAmxTokens, tokens - t0)), out + (2 * i + j) * 256);
              }
        }
      }
    }
  }
  _tile_release();
}

void i2s_amx_write_rows(const int32_t* dots, int tokens, int rows, const int32_t* sum, const float* act_scale,
                        float scale, float* y, int64_t y_stride) {
  const auto token_mask = static_cast<__mmask16>((1u << tokens) - 1);
  const auto row_mask = static_cast<__mmask16>((1u << rows) - 1);
  // Every token's scale / act_scale in one division (the lanes past `tokens` unused).
  alignas(64) float inv[16];
  _mm512_store_ps(inv, _mm512_div_ps(_mm512_set1_ps(scale), _mm512_maskz_loadu_ps(token_mask, act_scale)));
  for (int t = 0; t < tokens; ++t) {
    const __m512i d = _mm512_sub_epi32(_mm512_loadu_si512(dots + 16 * t), _mm512_set1_epi32(sum[t]));
    _mm512_mask_storeu_ps(y + t * y_stride, row_mask, _mm512_mul_ps(_mm512_cvtepi32_ps(d), _mm512_set1_ps(inv[t])));
  }
}

}  // namespace lowbit
