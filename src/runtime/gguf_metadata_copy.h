// Copying a GGUF file's metadata into a writer, every key with its own value
// type (nested arrays included), so a rewritten file keeps what the original said.
#pragma once

#include <string>
#include <vector>

#include "formats/gguf.h"
#include "formats/gguf_writer.h"

namespace lowbit {

// The value's bytes as they follow its type tag in a GGUF file.
void encode_gguf_value(const GgufValue& v, std::vector<uint8_t>& out);

// Sets every key of `from` in `to`, in file order, except those in `skip`.
void copy_gguf_metadata(const GgufFile& from, GgufWriter& to, const std::vector<std::string>& skip = {});

}  // namespace lowbit
