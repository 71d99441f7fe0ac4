#include "runtime/gguf_metadata_copy.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace lowbit {

namespace {

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.insert(out.end(), b, b + sizeof(T));
}

}  // namespace

void encode_gguf_value(const GgufValue& v, std::vector<uint8_t>& out) {
  switch (v.type) {
    case GgufValueType::UINT8:
    case GgufValueType::BOOL:
      return put(out, static_cast<uint8_t>(v.u));
    case GgufValueType::INT8:
      return put(out, static_cast<int8_t>(v.i));
    case GgufValueType::UINT16:
      return put(out, static_cast<uint16_t>(v.u));
    case GgufValueType::INT16:
      return put(out, static_cast<int16_t>(v.i));
    case GgufValueType::UINT32:
      return put(out, static_cast<uint32_t>(v.u));
    case GgufValueType::INT32:
      return put(out, static_cast<int32_t>(v.i));
    case GgufValueType::FLOAT32:
      return put(out, static_cast<float>(v.f));
    case GgufValueType::UINT64:
      return put(out, v.u);
    case GgufValueType::INT64:
      return put(out, v.i);
    case GgufValueType::FLOAT64:
      return put(out, v.f);
    case GgufValueType::STRING:
      put(out, static_cast<uint64_t>(v.str.size()));
      out.insert(out.end(), v.str.begin(), v.str.end());
      return;
    case GgufValueType::ARRAY:
      put(out, static_cast<uint32_t>(v.array_type));
      put(out, static_cast<uint64_t>(v.array.size()));
      for (const GgufValue& e : v.array) encode_gguf_value(e, out);
      return;
  }
  fail("GGUF value of unknown type ", static_cast<uint32_t>(v.type));
}

void copy_gguf_metadata(const GgufFile& from, GgufWriter& to, const std::vector<std::string>& skip) {
  for (const auto& [key, v] : from.metadata()) {
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    switch (v.type) {
      case GgufValueType::UINT8: to.set_u8(key, static_cast<uint8_t>(v.u)); break;
      case GgufValueType::INT8: to.set_i8(key, static_cast<int8_t>(v.i)); break;
      case GgufValueType::UINT16: to.set_u16(key, static_cast<uint16_t>(v.u)); break;
      case GgufValueType::INT16: to.set_i16(key, static_cast<int16_t>(v.i)); break;
      case GgufValueType::UINT32: to.set_u32(key, static_cast<uint32_t>(v.u)); break;
      case GgufValueType::INT32: to.set_i32(key, static_cast<int32_t>(v.i)); break;
      case GgufValueType::FLOAT32: to.set_f32(key, static_cast<float>(v.f)); break;
      case GgufValueType::BOOL: to.set_bool(key, v.u != 0); break;
      case GgufValueType::STRING: to.set_string(key, std::string(v.str)); break;
      case GgufValueType::UINT64: to.set_u64(key, v.u); break;
      case GgufValueType::INT64: to.set_i64(key, v.i); break;
      case GgufValueType::FLOAT64: to.set_f64(key, v.f); break;
      case GgufValueType::ARRAY: {
        std::vector<uint8_t> elements;
        for (const GgufValue& e : v.array) encode_gguf_value(e, elements);
        to.set_raw_array(key, static_cast<uint32_t>(v.array_type), v.array.size(), std::move(elements));
        break;
      }
    }
  }
}

}  // namespace lowbit
