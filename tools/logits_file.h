// Logits as text, one `%.9g` value per line: the format of the fixtures' oracles.
#pragma once

#include <string>
#include <vector>

namespace lowbit::tools {

void write_logits_file(const std::string& path, const std::vector<float>& logits);

}  // namespace lowbit::tools
