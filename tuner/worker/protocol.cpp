#include "tuner/worker/protocol.hpp"

#include "kernels/family.hpp"
#include "tuner/core/errors.hpp"

namespace ktune::protocol {

nlohmann::json config_to_json(const Config& config) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& [name, value] : config.values) pairs.push_back({name, to_json(value)});
  return pairs;
}

Config config_from_json(const nlohmann::json& json) {
  Config config;
  for (const auto& pair : json) config.values.emplace_back(pair.at(0).get<std::string>(), value_from_json(pair.at(1), "config"));
  return config;
}

Problem problem_from_json(const nlohmann::json& json) {
  const KernelFamily& family = find_family(json.at("family").get<std::string>());
  std::map<std::string, std::int64_t> dims;
  for (const auto& [name, value] : json.at("dims").items()) dims[name] = value.get<std::int64_t>();
  const auto precision = parse_precision(json.at("precision").get<std::string>());
  if (!precision) throw InputError("unknown precision " + json.at("precision").dump());
  return family.make_problem(dims, *precision);
}

}  // namespace ktune::protocol
