// The AMX tile configuration both tile kernels load (ldtilecfg): palette 1,
// all eight tile registers 16 rows of 64 bytes. Each call loads it on entry
// and releases the tiles on return, so kernels never see another's state.
// Included only by files built with the AMX flags.
#pragma once

#include <cstdint>

namespace lowbit {

struct alignas(64) AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

inline AmxTileConfig amx_tiles_16x64() {
  AmxTileConfig c;
  for (int t = 0; t < 8; ++t) {
    c.bytes_per_row[t] = 64;
    c.rows[t] = 16;
  }
  return c;
}

}  // namespace lowbit
