#include "kernels/tl_luts.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace lowbit {

namespace {

constexpr int kEntries = 16;

int64_t group_bytes(bool lossless) { return lossless ? 2 * kEntries : kEntries; }

// entries[g][16] of every group, TL2 triples then TL1 pairs.
template <class Emit>
void for_each_group(const TlTiles& tiles, const int8_t* q, Emit emit) {
  auto act = [&](int64_t k) { return k < tiles.cols ? static_cast<int>(q[k]) : 0; };
  int16_t e[kEntries];
  for (int64_t g = 0; g < tiles.tl2_groups(); ++g) {
    const int a[3] = {act(3 * g), act(3 * g + 1), act(3 * g + 2)};
    std::fill(e, e + kEntries, int16_t{0});
    for (int i = 0; i < 14; ++i) {
      int w[3];
      tl2_triple_of_index(i, w);
      e[i] = static_cast<int16_t>(w[0] * a[0] + w[1] * a[1] + w[2] * a[2]);
    }
    emit(g, e, std::abs(a[0]) + std::abs(a[1]) + std::abs(a[2]));
  }
  for (int64_t p = 0; p < tiles.tl1_groups(); ++p) {
    const int64_t k = tiles.three_cols + 2 * p;
    const int a[2] = {act(k), act(k + 1)};
    std::fill(e, e + kEntries, int16_t{0});
    for (int i = 0; i < 9; ++i) {
      int w[2];
      tl1_pair_of_index(i, w);
      e[i] = static_cast<int16_t>(w[0] * a[0] + w[1] * a[1]);
    }
    emit(tiles.tl2_groups() + p, e, std::abs(a[0]) + std::abs(a[1]));
  }
}

}  // namespace

int64_t tl_lut_bytes(const TlTiles& tiles, bool lossless) {
  return (tiles.tl2_groups() + tiles.tl1_groups()) * group_bytes(lossless);
}

float build_tl_luts(const TlTiles& tiles, bool lossless, const int8_t* q, uint8_t* lut) {
  if (lossless) {
    for_each_group(tiles, q, [&](int64_t g, const int16_t* e, int) {
      uint8_t* t = lut + g * 2 * kEntries;
      for (int i = 0; i < kEntries; ++i) {
        t[i] = static_cast<uint8_t>(e[i] & 0xff);
        t[kEntries + i] = static_cast<uint8_t>((e[i] >> 8) & 0xff);
      }
    });
    return 1.0f;
  }
  int largest = 0;
  for_each_group(tiles, q, [&](int64_t, const int16_t*, int abs_sum) { largest = std::max(largest, abs_sum); });
  const float unit = largest > 0 ? static_cast<float>(largest) / 127.0f : 1.0f;
  for_each_group(tiles, q, [&](int64_t g, const int16_t* e, int) {
    for (int i = 0; i < kEntries; ++i)
      lut[g * kEntries + i] = static_cast<uint8_t>(static_cast<int8_t>(std::lround(e[i] / unit)));
  });
  return unit;
}

}  // namespace lowbit
