#include "tuner/formats/json_values.hpp"

#include <cstdint>
#include <limits>

#include "tuner/core/errors.hpp"

namespace ktune {

Value scalar_value(const nlohmann::ordered_json& json, const std::string& where) {
  if (json.is_boolean()) return std::int64_t{json.get<bool>() ? 1 : 0};
  if (json.is_number_unsigned()) {
    const auto value = json.get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw InputError(where + ": integer " + std::to_string(value) + " is out of range");
    return static_cast<std::int64_t>(value);
  }
  if (json.is_number_integer()) return json.get<std::int64_t>();
  if (json.is_number_float()) return json.get<double>();
  if (json.is_string()) return json.get<std::string>();
  throw InputError(where + ": expected a number or a string, got " + json_kind(json));
}

nlohmann::ordered_json to_ordered_json(const Value& value) {
  return std::visit([](const auto& v) { return nlohmann::ordered_json(v); }, value);
}

std::optional<double> number_of(const nlohmann::ordered_json& json) {
  if (json.is_number()) return json.get<double>();
  return std::nullopt;
}

std::string json_kind(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return "null";
    case nlohmann::ordered_json::value_t::boolean: return "a boolean";
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
    case nlohmann::ordered_json::value_t::number_float: return "a number";
    case nlohmann::ordered_json::value_t::string: return "a string";
    case nlohmann::ordered_json::value_t::array: return "a list";
    case nlohmann::ordered_json::value_t::object: return "an object";
    default: return "an unexpected value";
  }
}

}  // namespace ktune
