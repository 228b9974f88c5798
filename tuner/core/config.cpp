#include "tuner/core/config.hpp"

#include "tuner/core/errors.hpp"

namespace ktune {

const Value& Config::at(std::string_view name) const {
  for (const auto& [key, value] : values)
    if (key == name) return value;
  std::vector<std::string> names;
  for (const auto& entry : values) names.push_back(entry.first);
  throw InputError("config has no parameter '" + std::string(name) + "'; it has: " + join_names(names));
}

std::int64_t Config::get_int(std::string_view name) const {
  return as_int(at(name), "parameter " + std::string(name));
}

bool Config::has(std::string_view name) const {
  for (const auto& entry : values)
    if (entry.first == name) return true;
  return false;
}

std::string Config::key() const {
  nlohmann::json sorted = nlohmann::json::object();  // nlohmann::json keeps keys sorted
  for (const auto& [name, value] : values) sorted[name] = ktune::to_json(value);
  return sorted.dump();
}

nlohmann::json Config::to_json() const {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : values) object[name] = ktune::to_json(value);
  return object;
}

Config Config::from_json(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) throw InputError(where + ": a config must be a JSON object, got " + json.dump());
  Config config;
  for (const auto& [name, value] : json.items())
    config.values.emplace_back(name, value_from_json(value, where + "." + name));
  return config;
}

std::string Config::describe() const {
  std::string out;
  for (const auto& [name, value] : values) {
    if (!out.empty()) out += ' ';
    out += name + "=" + ktune::to_string(value);
  }
  return out;
}

}  // namespace ktune
