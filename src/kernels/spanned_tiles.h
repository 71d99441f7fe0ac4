// A matrix's tiles split along K into spans, one tile layout per span, stored
// one after another (span-major): what TernaryMatmul::forward_spans reads for
// long rows. Rows up to max_units units of unit_columns columns keep one span.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lowbit {

// The first column of each span: whole units, as balanced as they come, at most
// max_units each; the last span also takes the columns past the last whole unit.
std::vector<int64_t> span_starts(int64_t cols, int64_t unit_columns, int64_t max_units);

template <class Tiles>
struct SpannedTiles {
  std::vector<int64_t> starts;  // first column of each span
  std::vector<Tiles> spans;

  SpannedTiles(int64_t rows, int64_t cols, int64_t unit_columns, int64_t max_units)
      : starts(span_starts(cols, unit_columns, max_units)) {
    spans.reserve(starts.size());
    for (size_t i = 0; i < starts.size(); ++i)
      spans.emplace_back(rows, (i + 1 < starts.size() ? starts[i + 1] : cols) - starts[i]);
  }
  int count() const { return static_cast<int>(spans.size()); }
  // Row r's ternary values t[K], each span's part into its tiles.
  void set_row(int64_t r, const int8_t* t) {
    for (size_t i = 0; i < spans.size(); ++i) spans[i].set_row(r, t + starts[i]);
  }
  int64_t bytes() const {
    int64_t b = 0;
    for (const Tiles& s : spans) b += s.bytes();
    return b;
  }
};

}  // namespace lowbit
