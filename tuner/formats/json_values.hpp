// Conversions between parsed JSON (member order kept) and ktune's Value, shared by the readers
// and writers of other tools' result files.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tuner/core/value.hpp"

namespace ktune {

// A parameter value: an integer (booleans read as 0/1, as value_from_json does), a real or a
// string. Throws InputError naming `where` for anything else, and for integers beyond int64.
Value scalar_value(const nlohmann::ordered_json& json, const std::string& where);

nlohmann::ordered_json to_ordered_json(const Value& value);

// The JSON value as a double when it is a number.
std::optional<double> number_of(const nlohmann::ordered_json& json);

// "a number", "a string", "a list", ... for messages.
std::string json_kind(const nlohmann::ordered_json& json);

}  // namespace ktune
