// Reading a request body's JSON fields with their checks: each wrong field is
// an Error that names it and says what it must be (the reply is a 400).
// Absent and null fields give the fallback.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace lowbit {

// The body as a JSON object.
nlohmann::json parse_json_object(const std::string& body);
double number_field(const nlohmann::json& j, const char* name, double lo, double hi, double fallback);
int64_t integer_field(const nlohmann::json& j, const char* name, int64_t lo, int64_t hi, int64_t fallback);
bool bool_field(const nlohmann::json& j, const char* name, bool fallback);
// x as a token id of a vocabulary of n_vocab; `where` names the field.
int32_t token_id(const nlohmann::json& x, int64_t n_vocab, const char* where);

}  // namespace lowbit
