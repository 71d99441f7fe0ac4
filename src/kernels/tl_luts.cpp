#include "kernels/tl_luts.h"

#include <algorithm>
#include <cstdlib>

namespace lowbit {

namespace {

constexpr int kEntries = 16;

// The weights each index stands for (tl_tiles.h); rows past the used indices are 0.
struct IndexWeights {
  int8_t w[kEntries][3] = {};
  constexpr IndexWeights(bool triples) {
    for (int i = 0; i < (triples ? 14 : 9); ++i) {
      const int n = triples ? i + 13 : i;
      w[i][0] = static_cast<int8_t>(triples ? n / 9 - 1 : n / 3 - 1);
      w[i][1] = static_cast<int8_t>(triples ? n / 3 % 3 - 1 : n % 3 - 1);
      w[i][2] = static_cast<int8_t>(triples ? n % 3 - 1 : 0);
    }
  }
};
constexpr IndexWeights kTriples(true), kPairs(false);

int64_t group_bytes(bool lossless) { return lossless ? 2 * kEntries : kEntries; }

// The activations of group g (a[2] = 0 for pairs) and its index weights.
struct Group {
  int a[3];
  const IndexWeights* weights;
};

Group group_at(const TlTiles& tiles, const int8_t* q, int64_t g) {
  auto act = [&](int64_t k) { return k < tiles.cols ? static_cast<int>(q[k]) : 0; };
  if (g < tiles.tl2_groups()) return {{act(3 * g), act(3 * g + 1), act(3 * g + 2)}, &kTriples};
  const int64_t k = tiles.three_cols + 2 * (g - tiles.tl2_groups());
  return {{act(k), act(k + 1), 0}, &kPairs};
}

}  // namespace

int64_t tl_lut_groups(const TlTiles& tiles) { return tiles.tl2_groups() + tiles.tl1_groups(); }

int64_t tl_lut_bytes(const TlTiles& tiles, bool lossless) { return tl_lut_groups(tiles) * group_bytes(lossless); }

float tl_lut_unit(const TlTiles& tiles, bool lossless, const int8_t* q) {
  if (lossless) return 1.0f;
  int largest = 0;
  for (int64_t g = 0; g < tl_lut_groups(tiles); ++g) {
    const Group gr = group_at(tiles, q, g);
    largest = std::max(largest, std::abs(gr.a[0]) + std::abs(gr.a[1]) + std::abs(gr.a[2]));
  }
  return largest > 0 ? static_cast<float>(largest) / 127.0f : 1.0f;
}

void build_tl_luts(const TlTiles& tiles, bool lossless, float unit, const int8_t* q, int64_t g0, int64_t g1,
                   uint8_t* lut) {
  const float inv_unit = 1.0f / unit;
  for (int64_t g = g0; g < g1; ++g) {
    const Group gr = group_at(tiles, q, g);
    int16_t e[kEntries];
    for (int i = 0; i < kEntries; ++i)
      e[i] = static_cast<int16_t>(gr.weights->w[i][0] * gr.a[0] + gr.weights->w[i][1] * gr.a[1] +
                                  gr.weights->w[i][2] * gr.a[2]);
    uint8_t* t = lut + g * group_bytes(lossless);
    if (lossless) {
      for (int i = 0; i < kEntries; ++i) {
        t[i] = static_cast<uint8_t>(e[i] & 0xff);
        t[kEntries + i] = static_cast<uint8_t>((e[i] >> 8) & 0xff);
      }
    } else {
      for (int i = 0; i < kEntries; ++i) {
        const float v = e[i] * inv_unit;
        t[i] = static_cast<uint8_t>(static_cast<int8_t>(static_cast<int>(v + (v < 0 ? -0.5f : 0.5f))));
      }
    }
  }
}

}  // namespace lowbit
