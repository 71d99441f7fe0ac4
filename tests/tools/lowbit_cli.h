// Running the `lowbit` program as a user does, for CLI tests: stdout, stderr
// and the exit code of one command line.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

#include "fixtures.h"

namespace lowbit::testing {

struct Outcome {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Single-quotes s for the shell.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline Outcome run_lowbit(const std::string& args) {
  // Per process: ctest may run several test processes at once.
  const std::string err_path = temp_path("stderr-" + std::to_string(getpid()) + ".txt");
  const std::string cmd = std::string(LOWBIT_BINARY) + " " + args + " 2>" + quote(err_path);
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  Outcome o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  const int status = pclose(p);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.err = read_text(err_path);
  return o;
}

}  // namespace lowbit::testing
