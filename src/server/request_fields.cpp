#include "server/request_fields.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace lowbit {

using json = nlohmann::json;

json parse_json_object(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    fail("request body is not JSON: ", e.what());
  }
  if (!j.is_object()) fail("request body must be a JSON object");
  return j;
}

double number_field(const json& j, const char* name, double lo, double hi, double fallback) {
  if (!j.contains(name) || j[name].is_null()) return fallback;
  if (!j[name].is_number()) fail("field \"", name, "\" must be a number");
  const double v = j[name].get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) fail("field \"", name, "\" = ", v, " is outside [", lo, ", ", hi, "]");
  return v;
}

int64_t integer_field(const json& j, const char* name, int64_t lo, int64_t hi, int64_t fallback) {
  if (!j.contains(name) || j[name].is_null()) return fallback;
  const json& x = j[name];
  if (!x.is_number_integer()) fail("field \"", name, "\" must be an integer");
  // nlohmann keeps a non-negative number unsigned: one above INT64_MAX must
  // not wrap into the range.
  const bool inside = x.is_number_unsigned() ? x.get<uint64_t>() <= static_cast<uint64_t>(hi) && x.get<uint64_t>() >= static_cast<uint64_t>(std::max<int64_t>(lo, 0))
                                             : x.get<int64_t>() >= lo && x.get<int64_t>() <= hi;
  if (!inside) fail("field \"", name, "\" = ", x.dump(), " is outside [", lo, ", ", hi, "]");
  return x.get<int64_t>();
}

bool bool_field(const json& j, const char* name, bool fallback) {
  if (!j.contains(name) || j[name].is_null()) return fallback;
  if (!j[name].is_boolean()) fail("field \"", name, "\" must be true or false");
  return j[name].get<bool>();
}

int32_t token_id(const json& x, int64_t n_vocab, const char* where) {
  const bool in_vocab = x.is_number_integer() && (x.is_number_unsigned() ? x.get<uint64_t>() < static_cast<uint64_t>(n_vocab)
                                                                         : x.get<int64_t>() >= 0 && x.get<int64_t>() < n_vocab);
  if (!in_vocab) fail("field \"", where, "\": ", x.dump(), " is not a token id of the vocabulary of ", n_vocab);
  return static_cast<int32_t>(x.get<int64_t>());
}

}  // namespace lowbit
