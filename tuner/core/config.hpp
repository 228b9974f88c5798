// One configuration: a value for every parameter of a search space, in the space's order.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/value.hpp"

namespace ktune {

struct Config {
  std::vector<std::pair<std::string, Value>> values;

  const Value& at(std::string_view name) const;  // throws InputError naming the parameter
  std::int64_t get_int(std::string_view name) const;
  bool has(std::string_view name) const;

  // Canonical text used as the database key: a JSON object with sorted keys.
  std::string key() const;
  nlohmann::json to_json() const;  // JSON object (keys sorted, as nlohmann::json keeps them)
  static Config from_json(const nlohmann::json& json, const std::string& where);
  // "threads=2 rows_per_task=4 ..." for humans.
  std::string describe() const;

  bool operator==(const Config& other) const = default;
};

}  // namespace ktune
