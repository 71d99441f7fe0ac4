// A one-line progress bar on stderr, redrawn at most once per percent.
#pragma once

#include <cstdio>
#include <string>

namespace lowbit::tools {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label) : label_(std::move(label)) {}
  ~ProgressBar() { finish(); }

  void update(double fraction) {
    const int percent = static_cast<int>(fraction * 100.0 + 1e-9);
    if (percent == last_percent_ || finished_) return;
    last_percent_ = percent;
    const int width = 40, filled = percent * width / 100;
    std::fprintf(stderr, "\r%s [%s%s] %3d%%", label_.c_str(), std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), percent);
    std::fflush(stderr);
  }

  void finish() {
    if (finished_ || last_percent_ < 0) return;
    finished_ = true;
    std::fprintf(stderr, "\n");
  }

 private:
  std::string label_;
  int last_percent_ = -1;
  bool finished_ = false;
};

}  // namespace lowbit::tools
