// Paths into ../shared/fixtures. A missing fixture is a test failure, never a skip.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace lowbit::testing {

inline std::string fixture(const std::string& relative) {
  const std::string path = std::string(LOWBIT_FIXTURES_DIR) + "/" + relative;
  EXPECT_TRUE(std::filesystem::exists(path)) << "missing fixture " << path
                                             << " (the suite needs ../shared/fixtures beside the repo)";
  return path;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One number per line (logits files, token id lists).
inline std::vector<double> read_numbers(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<double> v;
  double x;
  while (in >> x) v.push_back(x);
  return v;
}

// A path in a scratch folder of this test process (ctest runs tests in
// parallel processes, so names never collide between them).
inline std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("lowbit-tests-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

}  // namespace lowbit::testing
