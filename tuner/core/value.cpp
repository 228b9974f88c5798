#include "tuner/core/value.hpp"

#include <cmath>
#include <sstream>

#include "tuner/core/errors.hpp"

namespace ktune {

std::string to_string(const Value& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) {
    std::ostringstream out;
    out << *d;
    return out.str();
  }
  return std::get<std::string>(value);
}

nlohmann::json to_json(const Value& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

Value value_from_json(const nlohmann::json& json, const std::string& where) {
  if (json.is_boolean()) return std::int64_t{json.get<bool>() ? 1 : 0};
  if (json.is_number_integer()) return json.get<std::int64_t>();
  if (json.is_number_float()) return json.get<double>();
  if (json.is_string()) return json.get<std::string>();
  throw InputError(where + ": expected a number or a string, got " + json.dump());
}

bool is_number(const Value& value) { return !std::holds_alternative<std::string>(value); }

double as_double(const Value& value, const std::string& where) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  throw InputError(where + ": expected a number, got the string '" + std::get<std::string>(value) + "'");
}

std::int64_t as_int(const Value& value, const std::string& where) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return *i;
  if (const auto* d = std::get_if<double>(&value)) {
    if (std::floor(*d) == *d) return static_cast<std::int64_t>(*d);
    throw InputError(where + ": expected an integer, got " + to_string(value));
  }
  throw InputError(where + ": expected an integer, got the string '" + std::get<std::string>(value) + "'");
}

}  // namespace ktune
