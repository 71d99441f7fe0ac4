// The inner loops of the TL kernels (ISA code in x86_avx2/ and x86_avx512/).
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

}  // namespace lowbit
