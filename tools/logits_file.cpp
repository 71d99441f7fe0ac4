#include "logits_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace lowbit::tools {

void write_logits_file(const std::string& path, const std::vector<float>& logits) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) fail(path, ": cannot write logits: ", std::strerror(errno));
  for (float v : logits) std::fprintf(f, "%.9g\n", static_cast<double>(v));
  if (std::fclose(f) != 0) fail(path, ": cannot write logits: ", std::strerror(errno));
}

}  // namespace lowbit::tools
