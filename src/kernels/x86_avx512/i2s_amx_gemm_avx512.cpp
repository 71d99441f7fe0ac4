// I2sTiles x int8 activations on AMX: tdpbsud (signed activations x unsigned
// codes) over 16-token x 64-column blocks. See kernels/i2s_amx_gemm.h.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/aligned_buffer.h"
#include "kernels/i2s_amx_gemm.h"

// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here reads them.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lowbit {

namespace {

constexpr int kBlockColumns = 64;  // columns per tile dot: 16 quads x 4
constexpr int kLinesPerBlock = kBlockColumns / I2sTiles::kColumns;
constexpr int kMaxBlocks = 4;      // token blocks per pass over a weight tile (C tiles 0..3)
// Tokens go in chunks whose activations stay in L2 (about this many bytes)
// while every weight tile of the call passes over them; each tile's codes are
// unpacked once per chunk. Without chunks the 2B-4T down matrix (K = 6912)
// ran at half the multiply-adds per second of gate and up in 512-token
// prefill: its 3.5 MB of activations came from L3 for every tile.
constexpr int64_t kChunkBytes = int64_t{512} << 10;

// Tile registers: C (int32 sums) 0..3, B (codes) 4, A (activations) 5 and 6.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

TileConfig tile_config() {
  TileConfig c;
  for (int t = 0; t < 7; ++t) {
    c.bytes_per_row[t] = 64;
    c.rows[t] = 16;
  }
  return c;
}

// A span's codes of one weight tile as bytes, in B-tile order: block b, row i
// (columns 64b + 4i .. 64b + 4i + 3), 64 bytes (16 rows x 4 codes) per row.
// Lines past the span's last are zero codes, so they add nothing whatever
// activations they meet.
void unpack_codes(const uint8_t* tile, int64_t groups, int64_t blocks, uint8_t* out) {
  const __m512i mask = _mm512_set1_epi8(3);
  for (int64_t b = 0; b < blocks; ++b)
    for (int l = 0; l < kLinesPerBlock; ++l) {
      const int64_t g = b * kLinesPerBlock + l;
      const __m512i line = g < groups ? _mm512_load_si512(tile + 64 * g) : _mm512_setzero_si512();
      uint8_t* row = out + (b * 16 + 4 * l) * 64;
      for (int j = 0; j < 4; ++j)
        _mm512_store_si512(row + 64 * j, _mm512_and_si512(_mm512_srli_epi16(line, 2 * j), mask));
    }
}

// kBlocks token blocks (16 tokens each, rows of a[j] q_stride apart) times one
// weight tile's unpacked codes (per span: blocks[s] 64-column blocks at
// codes[s], activations from column starts[s]).
template <int kBlocks>
void tile_blocks(const std::vector<uint8_t*>& codes, const std::vector<int64_t>& blocks,
                 const std::vector<int64_t>& starts, const int8_t* const* a, int64_t q_stride, int32_t* out) {
  _tile_zero(0);
  if constexpr (kBlocks > 1) _tile_zero(1);
  if constexpr (kBlocks > 2) _tile_zero(2);
  if constexpr (kBlocks > 3) _tile_zero(3);
  for (size_t s = 0; s < codes.size(); ++s)
    for (int64_t b = 0; b < blocks[s]; ++b) {
      const int64_t col = starts[s] + kBlockColumns * b;
      _tile_loadd(4, codes[s] + b * 16 * 64, 64);
      _tile_loadd(5, a[0] + col, q_stride);
      _tile_dpbsud(0, 5, 4);
      if constexpr (kBlocks > 1) {
        _tile_loadd(6, a[1] + col, q_stride);
        _tile_dpbsud(1, 6, 4);
      }
      if constexpr (kBlocks > 2) {
        _tile_loadd(5, a[2] + col, q_stride);
        _tile_dpbsud(2, 5, 4);
      }
      if constexpr (kBlocks > 3) {
        _tile_loadd(6, a[3] + col, q_stride);
        _tile_dpbsud(3, 6, 4);
      }
    }
  _tile_stored(0, out, 64);
  if constexpr (kBlocks > 1) _tile_stored(1, out + 256, 64);
  if constexpr (kBlocks > 2) _tile_stored(2, out + 512, 64);
  if constexpr (kBlocks > 3) _tile_stored(3, out + 768, 64);
}

}  // namespace

void i2s_amx_gemm(const SpannedTiles<I2sTiles>& tiles, int64_t tile_begin, int64_t tile_end, const int8_t* q,
                  int64_t q_stride, int64_t tokens, I2sAmxSink sink) {
  if (tile_begin >= tile_end || tokens <= 0) return;
  // Per-thread scratch, grown on first use: the unpacked codes of one weight
  // tile, and the last partial token block zero-padded to 16 rows.
  thread_local AlignedBuffer<uint8_t> scratch;
  thread_local std::vector<int8_t> tail;
  std::vector<int64_t> blocks(tiles.spans.size());
  int64_t total = 0;
  for (size_t s = 0; s < tiles.spans.size(); ++s) {
    blocks[s] = (tiles.spans[s].groups + kLinesPerBlock - 1) / kLinesPerBlock;
    total += blocks[s];
  }
  if (scratch.size() < static_cast<size_t>(total * 16 * 64)) scratch = AlignedBuffer<uint8_t>(static_cast<size_t>(total * 16 * 64));
  const int64_t whole = tokens / kI2sAmxTokens * kI2sAmxTokens;
  const int rest = static_cast<int>(tokens - whole);
  if (rest > 0) {
    tail.assign(static_cast<size_t>(kI2sAmxTokens * q_stride), 0);
    std::memcpy(tail.data(), q + whole * q_stride, static_cast<size_t>(rest * q_stride));
  }
  std::vector<uint8_t*> codes(tiles.spans.size());  // each span's unpacked codes in scratch
  for (size_t s = 0, at = 0; s < codes.size(); at += static_cast<size_t>(blocks[s]), ++s)
    codes[s] = scratch.data() + at * 16 * 64;

  const TileConfig config = tile_config();
  _tile_loadconfig(&config);
  alignas(64) int32_t out[kMaxBlocks * 256];
  const int64_t n_blocks = (tokens + kI2sAmxTokens - 1) / kI2sAmxTokens;
  const int64_t chunk_blocks = std::max<int64_t>(kMaxBlocks, kChunkBytes / (q_stride * kI2sAmxTokens) / kMaxBlocks * kMaxBlocks);
  for (int64_t c0 = 0; c0 < n_blocks; c0 += chunk_blocks)
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (size_t s = 0; s < codes.size(); ++s) {
      const I2sTiles& span = tiles.spans[s];
      unpack_codes(span.tile(tile), span.groups, blocks[s], codes[s]);
    }
    const int64_t c_end = std::min(n_blocks, c0 + chunk_blocks);
    for (int64_t b0 = c0; b0 < c_end; b0 += kMaxBlocks) {
      const int count = static_cast<int>(std::min<int64_t>(kMaxBlocks, c_end - b0));
      const int8_t* a[kMaxBlocks];
      for (int j = 0; j < count; ++j) {
        const int64_t t0 = (b0 + j) * kI2sAmxTokens;
        a[j] = t0 < whole ? q + t0 * q_stride : tail.data();
      }
      switch (count) {
        case 1: tile_blocks<1>(codes, blocks, tiles.starts, a, q_stride, out); break;
        case 2: tile_blocks<2>(codes, blocks, tiles.starts, a, q_stride, out); break;
        case 3: tile_blocks<3>(codes, blocks, tiles.starts, a, q_stride, out); break;
        default: tile_blocks<4>(codes, blocks, tiles.starts, a, q_stride, out); break;
      }
      for (int j = 0; j < count; ++j) {
        const int64_t t0 = (b0 + j) * kI2sAmxTokens;
        sink(tile, t0, static_cast<int>(std::min<int64_t>(kI2sAmxTokens, tokens - t0)), out + 256 * j);
      }
    }
  }
  _tile_release();
}

}  // namespace lowbit
