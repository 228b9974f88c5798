#include "tuner/core/problem.hpp"

#include "tuner/core/errors.hpp"

namespace ktune {

std::int64_t Problem::dim(std::string_view name) const {
  for (const auto& [key, value] : dims)
    if (key == name) return value;
  std::vector<std::string> names;
  for (const auto& entry : dims) names.push_back(entry.first);
  throw InputError("problem of '" + family + "' has no dimension '" + std::string(name) +
                   "'; its dimensions are: " + join_names(names));
}

std::string Problem::key() const {
  std::string out;
  for (const auto& [name, value] : dims) {
    if (!out.empty()) out += ',';
    out += name + "=" + std::to_string(value);
  }
  return out + ";" + std::string(to_string(precision));
}

std::string Problem::describe() const {
  std::string out;
  for (const auto& [name, value] : dims) out += name + "=" + std::to_string(value) + " ";
  return out + std::string(to_string(precision));
}

nlohmann::json Problem::to_json() const {
  nlohmann::json dims_json = nlohmann::json::object();
  for (const auto& [name, value] : dims) dims_json[name] = value;
  return {{"family", family}, {"dims", dims_json}, {"precision", std::string(to_string(precision))}};
}

}  // namespace ktune
