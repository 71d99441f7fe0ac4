// A one-line progress bar on stderr, redrawn at most once per percent. When
// stderr is not a terminal (a log file, CI) it writes every 10% instead, each
// on its own line, rather than a hundred carriage-return redraws.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

namespace lowbit::tools {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label) : label_(std::move(label)) {}
  ~ProgressBar() { finish(); }

  void update(double fraction) {
    int percent = static_cast<int>(fraction * 100.0 + 1e-9);
    if (!tty_) percent = percent / 10 * 10;
    if (percent == last_percent_ || finished_) return;
    last_percent_ = percent;
    if (!tty_) {
      std::fprintf(stderr, "%s %d%%\n", label_.c_str(), percent);
      return;
    }
    const int width = 40, filled = percent * width / 100;
    std::fprintf(stderr, "\r%s [%s%s] %3d%%", label_.c_str(), std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), percent);
    std::fflush(stderr);
  }

  void finish() {
    if (finished_ || last_percent_ < 0) return;
    finished_ = true;
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  std::string label_;
  int last_percent_ = -1;
  bool finished_ = false;
  bool tty_ = ::isatty(STDERR_FILENO) != 0;
};

}  // namespace lowbit::tools
