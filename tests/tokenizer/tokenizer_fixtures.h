// Test data of the tokenizer tests: paths under ../shared/fixtures and
// llama.cpp's tokenizer test vectors (.inp / .out). A missing file throws,
// so the test that needs it fails.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace lowbit::testing {

inline std::string fixture_path(const std::string& relative) {
  // Appended, not `std::string(...) + "/" + relative`: GCC 12 warns on that
  // chain (-Warray-bounds, a known false positive) once inlined into some callers.
  std::string path = LOWBIT_FIXTURES_DIR;
  path += '/';
  path += relative;
  return path;
}

inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": missing fixture");
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// The text of ids, piece after piece.
inline std::string decode(const Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  std::string text;
  for (int32_t id : ids) text += tokenizer.token_to_piece(id);
  return text;
}

struct VocabTestCase {
  std::string text;
  std::vector<int32_t> ids;
};

// llama.cpp's test-tokenizer-0 format: every input is followed by
// "\n__ggml_vocab_test__\n"; line i of .out holds the ids of input i.
inline std::vector<VocabTestCase> read_vocab_test_vectors(const std::string& base) {
  const std::string inputs = read_whole_file(base + ".inp");
  const std::string outputs = read_whole_file(base + ".out");
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<VocabTestCase> cases;
  for (size_t pos = 0, next; (next = inputs.find(separator, pos)) != std::string::npos; pos = next + separator.size())
    cases.push_back({inputs.substr(pos, next - pos), {}});
  std::istringstream lines(outputs);
  std::string line;
  for (VocabTestCase& c : cases) {
    if (!std::getline(lines, line)) fail(base, ".out: fewer lines than the ", cases.size(), " inputs");
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) c.ids.push_back(id);
  }
  if (cases.empty()) fail(base, ".inp: no test inputs");
  return cases;
}

}  // namespace lowbit::testing
