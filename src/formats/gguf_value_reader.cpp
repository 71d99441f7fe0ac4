#include "formats/gguf_value_reader.h"

#include <array>

namespace lowbit {

namespace {

constexpr std::array<const char*, 13> kValueTypeNames = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool",  "string", "array", "uint64", "int64", "float64",
};

// The fewest bytes one element of `type` can occupy in the file: what bounds
// an array count before the elements are allocated.
uint64_t min_encoded_size(GgufValueType type) {
  switch (type) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8:
    case GgufValueType::BOOL:
      return 1;
    case GgufValueType::UINT16:
    case GgufValueType::INT16:
      return 2;
    case GgufValueType::UINT32:
    case GgufValueType::INT32:
    case GgufValueType::FLOAT32:
      return 4;
    case GgufValueType::STRING:  // u64 length
    case GgufValueType::UINT64:
    case GgufValueType::INT64:
    case GgufValueType::FLOAT64:
      return 8;
    case GgufValueType::ARRAY:  // u32 element type + u64 count
      return 12;
  }
  return 1;
}

std::string plural(GgufValueType type) {
  if (type == GgufValueType::STRING) return "strings";
  if (type == GgufValueType::ARRAY) return "arrays";
  return cat(gguf_value_type_name(type), " values");
}

GgufValue read_value(GgufCursor& in, GgufValueType type, int depth) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufValueType::UINT8: v.u = in.read<uint8_t>("uint8 value"); break;
    case GgufValueType::INT8: v.i = in.read<int8_t>("int8 value"); break;
    case GgufValueType::UINT16: v.u = in.read<uint16_t>("uint16 value"); break;
    case GgufValueType::INT16: v.i = in.read<int16_t>("int16 value"); break;
    case GgufValueType::UINT32: v.u = in.read<uint32_t>("uint32 value"); break;
    case GgufValueType::INT32: v.i = in.read<int32_t>("int32 value"); break;
    case GgufValueType::UINT64: v.u = in.read<uint64_t>("uint64 value"); break;
    case GgufValueType::INT64: v.i = in.read<int64_t>("int64 value"); break;
    case GgufValueType::FLOAT32: v.f = in.read<float>("float32 value"); break;
    case GgufValueType::FLOAT64: v.f = in.read<double>("float64 value"); break;
    case GgufValueType::BOOL:
      v.u = in.read<uint8_t>("bool value");
      if (v.u > 1) in.fail_here("bool value ", v.u, " is neither 0 nor 1");
      break;
    case GgufValueType::STRING: v.str = in.read_string("string"); break;
    case GgufValueType::ARRAY: {
      if (depth >= kGgufMaxArrayDepth) in.fail_here("arrays nested deeper than ", kGgufMaxArrayDepth, " levels");
      const uint32_t element_id = in.read<uint32_t>("array element type");
      if (!gguf_value_type_is_known(element_id)) in.fail_here("unknown array element type id ", element_id);
      v.array_type = static_cast<GgufValueType>(element_id);
      const uint64_t count = in.read<uint64_t>("array count");
      if (count > in.remaining() / min_encoded_size(v.array_type))
        in.fail_here("array of ", count, " ", plural(v.array_type), " does not fit in the file (", in.remaining(),
                     " bytes remain)");
      v.array.reserve(static_cast<size_t>(count));
      for (uint64_t k = 0; k < count; ++k) v.array.push_back(read_value(in, v.array_type, depth + 1));
      break;
    }
  }
  return v;
}

}  // namespace

const char* gguf_value_type_name(GgufValueType t) {
  const auto id = static_cast<uint32_t>(t);
  return id < kValueTypeNames.size() ? kValueTypeNames[id] : "unknown";
}

bool gguf_value_type_is_known(uint32_t id) { return id < kValueTypeNames.size(); }

GgufValue read_gguf_value(GgufCursor& in, GgufValueType type) { return read_value(in, type, 0); }

}  // namespace lowbit
