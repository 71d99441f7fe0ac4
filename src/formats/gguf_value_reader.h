// Reads one GGUF metadata value (scalar, string or array, arrays nested up to
// kGgufMaxArrayDepth) with every count checked against the bytes that remain
// before anything is allocated from it.
#pragma once

#include <cstdint>

#include "formats/gguf.h"
#include "formats/gguf_cursor.h"

namespace lowbit {

// Real files never nest arrays; the limit keeps a crafted file from
// recursing the stack away (each level costs only 12 bytes of file).
inline constexpr int kGgufMaxArrayDepth = 8;

// True when id is one of the 13 value types.
bool gguf_value_type_is_known(uint32_t id);

// Reads a value of `type` (already read from the file) at the cursor.
GgufValue read_gguf_value(GgufCursor& in, GgufValueType type);

}  // namespace lowbit
