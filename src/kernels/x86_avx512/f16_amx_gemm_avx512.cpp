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

// Step s of a panel's rows as B tiles, at out + s * kTile of
// [3 row groups][hi, lo][steps][16 pairs of k][16 rows x 2]: pair i of the
// step is its values 2i and 2i + 1 of a group's 16 rows side by side. A
// panel step holds the 48 rows' values of one k, so a pair is two steps'
// values interleaved; values past k are 0. An F16 value's rest after its top
// bf16 piece has at most 3 significant bits: the second piece as it is.
void convert_step(const uint16_t* panel, int64_t k, int64_t s, uint16_t* out) {
  const int64_t piece = steps_of(k) * kTile;
  const auto values = [&](int64_t c, int j) {
    return c < k ? _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(panel + c * kF16PanelRows + 16 * j)))
                 : _mm512_setzero_ps();
  };
  for (int i = 0; i < 16; ++i) {
    const int64_t c = 32 * s + 2 * i;
    for (int j = 0; j < kGroups; ++j) {
      const __m512 a = values(c, j), b = values(c + 1, j);
      const __m512 a_hi = top_bf16(a), b_hi = top_bf16(b);
      uint16_t* at = out + 2 * j * piece + s * kTile + 32 * i;
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
inline void load_b(const uint16_t* b, int64_t piece, int64_t at) {
  _tile_loadd(3, b + at, 64);
  _tile_loadd(4, b + 2 * piece + at, 64);
  _tile_loadd(5, b + 4 * piece + at, 64);
}

// The next panel's lines, fetched a few per step of the tile products while
// the panel before it is multiplied: converted straight from memory, the
// panels had kept the products waiting a third of the time.
struct PanelAhead {
  const char* next = nullptr;
  int64_t lines = 0, per_step = 0;
  void step() {
    for (int64_t i = 0; i < per_step && lines > 0; ++i, --lines, next += 64) _mm_prefetch(next, _MM_HINT_T1);
  }
};

// C[j] += the five piece products of every step for one token block (a: its
// [3][steps][tile] pieces) and the panel's groups (b: convert_step's):
// (p3, p2, p1) x hi, then (p1, p2) x lo, smallest first; 10 tile loads for
// 15 products.
// The first token block of a panel converts each step as it goes (panel:
// the F16 rows, else nullptr): the vector units convert while the tile unit
// multiplies the step before.
void block_products(const uint16_t* a, const uint16_t* panel, int64_t k, uint16_t* b, PanelAhead& ahead,
                    float* out /* [3][256] */) {
  const int64_t steps = steps_of(k), piece = steps * kTile;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t at = s * kTile;
    if (panel != nullptr) convert_step(panel, k, s, b);
    ahead.step();
    load_b(b, piece, at);
    _tile_loadd(6, a + 2 * piece + at, 64);
    dots_with(6);
    _tile_loadd(7, a + piece + at, 64);
    dots_with(7);
    _tile_loadd(6, a + at, 64);
    dots_with(6);
    load_b(b + piece, piece, at);
    dots_with(6);
    _tile_loadd(7, a + piece + at, 64);
    dots_with(7);
  }
  _tile_stored(0, out, 64);
  _tile_stored(1, out + 256, 64);
  _tile_stored(2, out + 512, 64);
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
      __m512 p0[3], p1[3];
      cut_bf16(load_or_zero(row + c, n), p0);
      cut_bf16(load_or_zero(row + c + 16, n - 16), p1);
      for (int p = 0; p < 3; ++p) _mm512_store_si512(block + (p * steps + s) * kTile + 32 * i, pack_bf16(p0[p], p1[p]));
    }
  }
}

void f16_amx_gemm(const uint16_t* panels, int64_t rows, int64_t k, int64_t p0, int64_t p1, const uint16_t* laid,
                  int64_t tokens, float* y, int64_t y_stride) {
  if (p0 >= p1 || tokens <= 0) return;
  const int64_t steps = steps_of(k), blocks = (tokens + kF16AmxTokens - 1) / kF16AmxTokens;
  // A panel's pieces (convert_step). Per thread, grown on first use.
  thread_local AlignedBuffer<uint16_t> converted;
  const auto size = static_cast<size_t>(2 * kGroups * steps * kTile);
  if (converted.size() < size) converted = AlignedBuffer<uint16_t>(size);
  alignas(64) float out[kGroups * 256];

  const AmxTileConfig config = amx_tiles_16x64();
  _tile_loadconfig(&config);
  for (int64_t p = p0; p < p1; ++p) {
    PanelAhead ahead;
    if (p + 1 < p1) {
      ahead.next = reinterpret_cast<const char*>(panels + (p + 1) * kF16PanelRows * k);
      ahead.lines = kF16PanelRows * k * 2 / 64;
      ahead.per_step = (ahead.lines + blocks * steps - 1) / (blocks * steps);
    }
    for (int64_t b = 0; b < blocks; ++b) {
      block_products(laid + b * 3 * steps * kTile, b == 0 ? panels + p * kF16PanelRows * k : nullptr, k,
                     converted.data(), ahead, out);
      for (int j = 0; j < kGroups; ++j) {
        const int64_t r0 = kF16PanelRows * p + kGroupRows * j;
        if (r0 >= rows) break;
        const auto row_mask = static_cast<__mmask16>((1u << std::min<int64_t>(rows - r0, 16)) - 1);
        for (int64_t t = kF16AmxTokens * b; t < std::min(tokens, kF16AmxTokens * (b + 1)); ++t)
          _mm512_mask_storeu_ps(y + t * y_stride + r0, row_mask, _mm512_load_ps(out + 256 * j + 16 * (t % kF16AmxTokens)));
      }
    }
  }
  _tile_release();
}

}  // namespace lowbit
