// F16 row panels x float tokens on AMX-BF16. See kernels/f16_amx_gemm.h.
#include <immintrin.h>

#include <algorithm>

#include "core/aligned_buffer.h"
#include "kernels/f16_amx_gemm.h"
#include "kernels/f16_panels.h"
#include "kernels/x86_avx512/amx_tile_config.h"
#include "kernels/x86_avx512/bf16_pieces.h"

namespace lowbit {

namespace {

constexpr int kTile = 512;  // bf16 per tile: 16 rows x 32
constexpr int64_t steps_of(int64_t k) { return (k + 31) / 32; }

constexpr int kGroupRows = 16;                       // rows per B tile
constexpr int kGroups = kF16PanelRows / kGroupRows;  // row groups (B tiles) per panel

// The panel's lines are fetched (prefetcht0) this far ahead of the step
// being converted. Without it the conversion's loads waited on memory for
// over half the time of a lone token block, one thread reading ~9 GB/s;
// 1-3 KiB measured alike, 4-8 KiB slower (docs/performance.md "Session 36").
constexpr int64_t kAheadBytes = 2048;

// Step s of a panel's rows as B tiles, at out of [3 row groups][hi, lo]
// [16 pairs of k][16 rows x 2], each group's piece `piece` bf16 after the one
// before: pair i of the step is its values 2i and 2i + 1 of a group's 16 rows
// side by side. A panel step holds the 48 rows' values of one k, so a pair is
// two steps' values interleaved; values past k are 0. An F16 value's rest
// after its top bf16 piece has at most 3 significant bits: the second piece
// as it is.
void convert_step(const uint16_t* panel, int64_t k, int64_t s, uint16_t* out, int64_t piece) {
  const auto values = [&](int64_t c, int j) {
    return c < k ? _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(panel + c * kF16PanelRows + 16 * j)))
                 : _mm512_setzero_ps();
  };
  for (int i = 0; i < 16; ++i) {
    const int64_t c = 32 * s + 2 * i;
    for (int l = 0; l < 3; ++l)
      _mm_prefetch(reinterpret_cast<const char*>(panel + c * kF16PanelRows) + kAheadBytes + 64 * l, _MM_HINT_T0);
    for (int j = 0; j < kGroups; ++j) {
      const __m512 a = values(c, j), b = values(c + 1, j);
      const __m512 a_hi = top_bf16(a), b_hi = top_bf16(b);
      uint16_t* at = out + 2 * j * piece + 32 * i;
      _mm512_store_si512(at, pair_bf16(a_hi, b_hi));
      _mm512_store_si512(at + piece, pair_bf16(_mm512_sub_ps(a, a_hi), _mm512_sub_ps(b, b_hi)));
    }
  }
}

// Tile registers: C 0..2 (one token block x the panel's three row groups),
// B 3..5 (the groups' piece of the moment), A 6 and 7 (the token block's
// pieces, in turn). The tile intrinsics take register numbers as literals:
// each product is written out.
inline void dots_with(int a) {
  if (a == 6) {
    _tile_dpbf16ps(0, 6, 3);
    _tile_dpbf16ps(1, 6, 4);
    _tile_dpbf16ps(2, 6, 5);
  } else {
    _tile_dpbf16ps(0, 7, 3);
    _tile_dpbf16ps(1, 7, 4);
    _tile_dpbf16ps(2, 7, 5);
  }
}
inline void load_b(const uint16_t* b, int64_t piece) {
  _tile_loadd(3, b, 64);
  _tile_loadd(4, b + 2 * piece, 64);
  _tile_loadd(5, b + 4 * piece, 64);
}

// Converted steps kept at a time (ring slot s % kRingSteps of the B
// buffer): 24 KiB that stay in L1. Every token block of a panel multiplies a
// span of this many steps before the next is converted, so the pieces are
// converted once per panel whatever the token count.
constexpr int64_t kRingSteps = 4;

// C[j] += the five piece products of steps [s0, s1) for one token block (a:
// its [3][steps][tile] pieces) and the panel's groups (b: convert_step's, at
// ring slot s % kRingSteps, pieces kRingSteps tiles apart):
// (p3, p2, p1) x hi, then (p1, p2) x lo, smallest first; 10 tile loads for
// 15 products.
// The first token block converts each step as it goes (panel: the F16
// rows, else nullptr): the vector units convert while the tile unit
// multiplies the step before.
void span_products(const uint16_t* a, int64_t steps, const uint16_t* panel, int64_t k, uint16_t* b, int64_t s0,
                   int64_t s1) {
  const int64_t piece = steps * kTile, b_piece = kRingSteps * kTile;
  for (int64_t s = s0; s < s1; ++s) {
    const int64_t at = s * kTile;
    uint16_t* const bs = b + s % kRingSteps * kTile;
    if (panel != nullptr) convert_step(panel, k, s, bs, b_piece);
    load_b(bs, b_piece);
    _tile_loadd(6, a + 2 * piece + at, 64);
    dots_with(6);
    _tile_loadd(7, a + piece + at, 64);
    dots_with(7);
    _tile_loadd(6, a + at, 64);
    dots_with(6);
    load_b(bs + b_piece, b_piece);
    dots_with(6);
    _tile_loadd(7, a + piece + at, 64);
    dots_with(7);
  }
}

inline void zero_c() {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
}
inline void store_c(float* c /* [3][256] */) {
  _tile_stored(0, c, 64);
  _tile_stored(1, c + 256, 64);
  _tile_stored(2, c + 512, 64);
}
inline void load_c(const float* c) {
  _tile_loadd(0, c, 64);
  _tile_loadd(1, c + 256, 64);
  _tile_loadd(2, c + 512, 64);
}

}  // namespace

int64_t f16_amx_laid_tokens_size(int64_t tokens, int64_t k) {
  return (tokens + kF16AmxTokens - 1) / kF16AmxTokens * 3 * steps_of(k) * kTile;
}

void lay_f16_amx_tokens(const float* x, int64_t x_stride, int64_t tokens, int64_t k, int64_t b, uint16_t* out) {
  const int64_t steps = steps_of(k);
  uint16_t* block = out + b * 3 * steps * kTile;
  for (int i = 0; i < kF16AmxTokens; ++i) {
    const int64_t t = kF16AmxTokens * b + i;
    const float* row = t < tokens ? x + t * x_stride : x;
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t c = 32 * s, n = t < tokens ? k - c : 0;
      __m512i pieces[3];
      pieces_of_32(load_or_zero(row + c, n), load_or_zero(row + c + 16, n - 16), pieces);
      for (int p = 0; p < 3; ++p) _mm512_store_si512(block + (p * steps + s) * kTile + 32 * i, pieces[p]);
    }
  }
}

void f16_amx_gemm(const uint16_t* panels, int64_t rows, int64_t k, int64_t p0, int64_t p1, const uint16_t* laid,
                  int64_t tokens, float* y, int64_t y_stride) {
  if (p0 >= p1 || tokens <= 0) return;
  const int64_t steps = steps_of(k), blocks = (tokens + kF16AmxTokens - 1) / kF16AmxTokens;
  // One token block keeps its C tiles over the whole row; more take turns
  // over spans of kRingSteps steps, each keeping its sums here between turns.
  const int64_t span = blocks > 1 ? kRingSteps : steps;
  // The ring of converted steps, then [blocks][3][256] sums. Per thread,
  // grown on first use.
  thread_local AlignedBuffer<uint16_t> buffer;
  const int64_t ring = 2 * kGroups * kRingSteps * kTile;
  const auto size = static_cast<size_t>(ring + 2 * blocks * kGroups * 256);
  if (buffer.size() < size) buffer = AlignedBuffer<uint16_t>(size);
  uint16_t* const b = buffer.data();
  float* const sums = reinterpret_cast<float*>(buffer.data() + ring);

  const AmxTileConfig config = amx_tiles_16x64();
  _tile_loadconfig(&config);
  for (int64_t p = p0; p < p1; ++p) {
    const uint16_t* const panel = panels + p * kF16PanelRows * k;
    for (int64_t s0 = 0; s0 < steps; s0 += span) {
      const int64_t s1 = std::min(steps, s0 + span);
      for (int64_t bl = 0; bl < blocks; ++bl) {
        float* const c = sums + bl * kGroups * 256;
        if (s0 == 0)
          zero_c();
        else
          load_c(c);
        span_products(laid + bl * 3 * steps * kTile, steps, bl == 0 ? panel : nullptr, k, b, s0, s1);
        store_c(c);
      }
    }
    for (int64_t bl = 0; bl < blocks; ++bl)
      for (int j = 0; j < kGroups; ++j) {
        const int64_t r0 = kF16PanelRows * p + kGroupRows * j;
        if (r0 >= rows) break;
        const auto row_mask = static_cast<__mmask16>((1u << std::min<int64_t>(rows - r0, 16)) - 1);
        const float* const c = sums + (bl * kGroups + j) * 256;
        for (int64_t t = kF16AmxTokens * bl; t < std::min(tokens, kF16AmxTokens * (bl + 1)); ++t)
          _mm512_mask_storeu_ps(y + t * y_stride + r0, row_mask, _mm512_load_ps(c + 16 * (t % kF16AmxTokens)));
      }
  }
  _tile_release();
}

}  // namespace lowbit
