#include "kernels/vnni4_layout.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/two_bit_word.h"

namespace lowbit {

namespace {

// Writes row r's values for one step into the step's bytes (see the header).
void place_step(Vnni4Bits bits, const uint8_t* values, int64_t r, uint8_t* step) {
  switch (bits) {
    case Vnni4Bits::Eight:
      for (int j = 0; j < 4; ++j) step[4 * r + j] = values[j];
      break;
    case Vnni4Bits::Two: {
      const uint32_t word = two_bit_word(values);
      std::memcpy(step + 4 * r, &word, 4);
      break;
    }
    case Vnni4Bits::Four:
      for (int j = 0; j < 4; ++j) step[4 * r + j] = static_cast<uint8_t>((values[j] & 15) | (values[4 + j] & 15) << 4);
      break;
    case Vnni4Bits::One:
      for (int p = 0; p < 8; ++p)
        for (int j = 0; j < 4; ++j) step[4 * r + j] |= static_cast<uint8_t>((values[4 * p + j] & 1) << p);
      break;
    case Vnni4Bits::OneLookup:
      for (int q = 0; q < 4; ++q)
        for (int j = 0; j < 4; ++j) step[16 * (q / 2) + r] |= static_cast<uint8_t>((values[4 * q + j] & 1) << (4 * (q % 2) + j));
      break;
  }
}

}  // namespace

Vnni4Layout pack_vnni4(Vnni4Bits bits, int64_t rows, int64_t cols, int64_t group, Vnni4RowSource source,
                       ThreadPool& pool) {
  Vnni4Layout l;
  l.bits = bits;
  l.rows = rows;
  l.cols = cols;
  l.group = group;
  const int64_t group_unit = std::max<int64_t>(16, l.k_per_step());
  if (rows <= 0 || cols <= 0 || group <= 0 || cols % group != 0 || group % group_unit != 0)
    fail("vnni4 layout: ", rows, " x ", cols, " with groups of ", group,
         " k does not fit (K must be a multiple of the group, the group of ", group_unit, ")");
  l.data = AlignedBuffer<uint8_t>(static_cast<size_t>(l.row_blocks() * l.block_stride()));
  uint8_t* base = l.data.data();
  const int64_t steps_per_group = group / l.k_per_step();
  pool.parallel_for(l.row_blocks(), 1, [&](int64_t begin, int64_t end, int) {
    std::vector<uint8_t> values(static_cast<size_t>(cols));  // [K]
    std::vector<uint16_t> scales(static_cast<size_t>(l.groups()));
    for (int64_t rb = begin; rb < end; ++rb) {
      uint8_t* block = base + rb * l.block_stride();
      for (int64_t r = 0; r < kVnni4Rows && rb * kVnni4Rows + r < rows; ++r) {
        source(rb * kVnni4Rows + r, values.data(), scales.data());
        for (int64_t g = 0; g < l.groups(); ++g) {
          uint8_t* group_codes = block + vnni4_codes_offset(g, l.group_bytes());
          const uint8_t* group_values = values.data() + g * l.group;
          for (int64_t s = 0; s < steps_per_group; ++s)
            place_step(bits, group_values + s * l.k_per_step(), r, group_codes + s * l.step_bytes());
        }
        for (int64_t g = 0; g < l.groups(); ++g) {
          uint16_t* group_scales =
              reinterpret_cast<uint16_t*>(block + vnni4_scales_offset(g, l.groups(), l.group_bytes()));
          group_scales[r] = scales[g];
        }
      }
    }
  });
  return l;
}

}  // namespace lowbit
