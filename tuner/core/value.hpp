// A parameter or expression value: integer, real or string (T1 spaces use all three).
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace ktune {

using Value = std::variant<std::int64_t, double, std::string>;

std::string to_string(const Value& value);
nlohmann::json to_json(const Value& value);
// Accepts JSON integers, reals, strings and booleans (as 0/1); `where` names the source in errors.
Value value_from_json(const nlohmann::json& json, const std::string& where);
bool is_number(const Value& value);
// Numeric view of a value; throws InputError for strings.
double as_double(const Value& value, const std::string& where);
std::int64_t as_int(const Value& value, const std::string& where);

}  // namespace ktune
