// Typed access to GGUF metadata: the conversions a model loader needs
// (any integer width to u64/i64, float32 or float64 to double), each refusing
// values it cannot represent instead of truncating them.
#include <string>

#include "core/error.h"
#include "formats/gguf.h"

namespace lowbit {

namespace {

bool is_unsigned(GgufValueType t) {
  return t == GgufValueType::UINT8 || t == GgufValueType::UINT16 || t == GgufValueType::UINT32 ||
         t == GgufValueType::UINT64;
}

bool is_signed(GgufValueType t) {
  return t == GgufValueType::INT8 || t == GgufValueType::INT16 || t == GgufValueType::INT32 ||
         t == GgufValueType::INT64;
}

bool is_float(GgufValueType t) { return t == GgufValueType::FLOAT32 || t == GgufValueType::FLOAT64; }

std::string type_text(const GgufValue& v) {
  if (v.type == GgufValueType::ARRAY) return cat("array of ", gguf_value_type_name(v.array_type));
  return gguf_value_type_name(v.type);
}

}  // namespace

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const GgufValue& GgufFile::get(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail(path_, ": key '", key, "' is missing");
  return *v;
}

void GgufFile::fail_type(std::string_view key, const GgufValue& v, const char* wanted) const {
  fail(path_, ": key '", key, "' has type ", type_text(v), ", wanted ", wanted);
}

std::string_view GgufFile::get_string(std::string_view key) const {
  const GgufValue& v = get(key);
  if (v.type != GgufValueType::STRING) fail_type(key, v, "string");
  return v.str;
}

uint64_t GgufFile::get_uint(std::string_view key) const {
  const GgufValue& v = get(key);
  if (is_unsigned(v.type)) return v.u;
  if (!is_signed(v.type)) fail_type(key, v, "an integer");
  if (v.i < 0) fail(path_, ": key '", key, "' is ", v.i, ", wanted a non-negative integer");
  return static_cast<uint64_t>(v.i);
}

int64_t GgufFile::get_int(std::string_view key) const {
  const GgufValue& v = get(key);
  if (is_signed(v.type)) return v.i;
  if (!is_unsigned(v.type)) fail_type(key, v, "an integer");
  if (v.u > static_cast<uint64_t>(INT64_MAX)) fail(path_, ": key '", key, "' is ", v.u, ", above 2^63-1");
  return static_cast<int64_t>(v.u);
}

double GgufFile::get_float(std::string_view key) const {
  const GgufValue& v = get(key);
  if (is_float(v.type)) return v.f;
  if (is_unsigned(v.type)) return static_cast<double>(v.u);
  if (is_signed(v.type)) return static_cast<double>(v.i);
  fail_type(key, v, "a number");
}

bool GgufFile::get_bool(std::string_view key) const {
  const GgufValue& v = get(key);
  if (v.type != GgufValueType::BOOL) fail_type(key, v, "bool");
  return v.u != 0;
}

std::optional<uint64_t> GgufFile::get_uint_opt(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_uint(key);
}

std::optional<double> GgufFile::get_float_opt(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_float(key);
}

std::optional<bool> GgufFile::get_bool_opt(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_bool(key);
}

std::optional<std::string_view> GgufFile::get_string_opt(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_string(key);
}

std::vector<std::string_view> GgufFile::get_string_array(std::string_view key) const {
  const GgufValue& v = get(key);
  if (v.type != GgufValueType::ARRAY || v.array_type != GgufValueType::STRING)
    fail_type(key, v, "array of string");
  std::vector<std::string_view> out;
  out.reserve(v.array.size());
  for (const GgufValue& e : v.array) out.push_back(e.str);
  return out;
}

std::vector<float> GgufFile::get_float_array(std::string_view key) const {
  const GgufValue& v = get(key);
  if (v.type != GgufValueType::ARRAY || !is_float(v.array_type)) fail_type(key, v, "array of float32 or float64");
  std::vector<float> out;
  out.reserve(v.array.size());
  for (const GgufValue& e : v.array) out.push_back(static_cast<float>(e.f));
  return out;
}

std::vector<int64_t> GgufFile::get_int_array(std::string_view key) const {
  const GgufValue& v = get(key);
  const bool unsigned_elements = is_unsigned(v.array_type);
  if (v.type != GgufValueType::ARRAY || !(unsigned_elements || is_signed(v.array_type)))
    fail_type(key, v, "array of integers");
  std::vector<int64_t> out;
  out.reserve(v.array.size());
  for (size_t k = 0; k < v.array.size(); ++k) {
    const GgufValue& e = v.array[k];
    if (!unsigned_elements) {
      out.push_back(e.i);
    } else if (e.u > static_cast<uint64_t>(INT64_MAX)) {
      fail(path_, ": key '", key, "': element ", k, " is ", e.u, ", above 2^63-1");
    } else {
      out.push_back(static_cast<int64_t>(e.u));
    }
  }
  return out;
}

}  // namespace lowbit
