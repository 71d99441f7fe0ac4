// The per-token lookup tables of the TL kernels (tl_tiles.h): for each column
// group, the dot of the group's activations with every weight group an index
// stands for. Built once per token and matrix, read by every tile.
//
//   table of a TL2 triple (a0, a1, a2): entry i = w . a for w = tl2_triple_of_index(i), i < 14
//   table of a TL1 pair   (a0, a1):     entry i = w . a for w = tl1_pair_of_index(i),   i < 9
//   unused entries are 0; activations past K count as 0.
//
// Lossless (_1): entries are int16 (|entry| <= 3 * 128), stored as two
// 16-byte vpshufb tables per group, low bytes then high bytes ("pack and
// unpack": two lookups, then vpunpck{l,h}bw rebuilds the int16).
// Lossy (_0): one 16-byte int8 table per group, entry' = entry / unit rounded
// to nearest (float arithmetic, ties away from zero), unit = (largest sum of |a| over a group) / 127 for the
// token, so every entry' is within [-127, 127]; the dot is unit * sum entry'.
#pragma once

#include <cstdint>

#include "kernels/tl_tiles.h"

namespace lowbit {

// Bytes of one token's tables: groups() tables of 32 (lossless) or 16 bytes.
int64_t tl_lut_bytes(const TlTiles& tiles, bool lossless);
int64_t tl_lut_groups(const TlTiles& tiles);  // TL2 groups, then TL1 groups

// The table unit of a token with activations q[0, K) (1 when lossless).
float tl_lut_unit(const TlTiles& tiles, bool lossless, const int8_t* q);

// Writes the tables of groups [g0, g1) of a token (lut: the token's tables).
// Groups are independent, so threads may build parts of one token's tables.
// The scalar definition of the tables; the kernels build them with
// build_tl_luts_avx2 (tl_tile_dots.h), tested equal byte for byte.
void build_tl_luts(const TlTiles& tiles, bool lossless, float unit, const int8_t* q, int64_t g0, int64_t g1,
                   uint8_t* lut);

}  // namespace lowbit
