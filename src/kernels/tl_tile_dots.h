// The inner loops of the TL kernels (ISA code in x86_avx2/, x86_avx512/ and arm_neon/).
#pragma once

#include <cstdint>

namespace lowbit {

// One 64-row tile of TlTiles times one token's tables (tl_luts.h).
struct TlTileTask {
  const uint8_t* tile;
  int64_t tl2_steps, tl1_steps;
  int64_t sign_offset, tl1_offset;  // TlTiles::sign_offset(), tl1_offset()
  const uint8_t* lut;               // the token's tables, TL2 groups then TL1
  int32_t* out;                     // [64] sum of looked-up entries per row, in row order
};

// Exact int32 sums (int16 partial sums are widened before they can overflow).
using TlTileDots = void (*)(const TlTileTask&);

// lossless: int16 tables (two lookups per group); otherwise int8 tables.
TlTileDots tl_tile_dots_avx512(bool lossless);
TlTileDots tl_tile_dots_avx2(bool lossless);
TlTileDots tl_tile_dots_neon(bool lossless);  // the tables as build_tl_luts writes them

// build_tl_luts (tl_luts.h) with AVX2, byte for byte the same tables.
struct TlLutTask {
  const int8_t* q;  // the token's activations, [K]
  int64_t cols, three_cols, tl2_groups;
  bool lossless;
  float unit;
  int64_t g0, g1;  // groups to build
  uint8_t* lut;    // the token's tables
};
void build_tl_luts_avx2(const TlLutTask& task);

}  // namespace lowbit
