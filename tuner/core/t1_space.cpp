#include "tuner/core/t1_space.hpp"

#include <fstream>

#include "tuner/core/errors.hpp"
#include "tuner/core/json_file.hpp"
#include "tuner/core/value_list.hpp"

namespace ktune {

SearchSpace load_t1_space(const std::filesystem::path& file) {
  std::ifstream in = open_json_file(file, "a T1 file", "check the path given to --t1");
  nlohmann::json t1;
  try {
    t1 = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file.string() + ": not valid JSON (" + parse_error_text(e) + ")");
  }
  return t1_space_from_json(t1, file.string());
}

namespace {

std::string values_text(const nlohmann::json& parameter) { return parameter.at("Values").get<std::string>(); }

}  // namespace

SearchSpace t1_space_from_json(const nlohmann::json& t1, const std::string& where) {
  // Every shape check names what was expected: T1 files come from other tools and from users.
  if (!t1.is_object() || !t1.contains("ConfigurationSpace") || !t1["ConfigurationSpace"].is_object() ||
      !t1["ConfigurationSpace"].contains("TuningParameters"))
    throw InputError(where + ": not a T1 spec (no ConfigurationSpace.TuningParameters)");
  const auto& space = t1["ConfigurationSpace"];
  const auto text_or = [](const nlohmann::json& object, const char* key, const std::string& fallback) {
    return object.is_object() && object.contains(key) && object[key].is_string() ? object[key].get<std::string>()
                                                                                  : fallback;
  };

  nlohmann::json ours = {{"family", text_or(t1.value("General", nlohmann::json::object()), "BenchmarkName", "t1")},
                         {"backend", text_or(t1.value("KernelSpecification", nlohmann::json::object()), "Language", "t1")},
                         {"parameters", nlohmann::json::array()},
                         {"constraints", nlohmann::json::array()}};
  const auto& parameters = space["TuningParameters"];
  if (!parameters.is_array()) throw InputError(where + ": ConfigurationSpace.TuningParameters must be an array");
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto& parameter = parameters[i];
    const std::string at = where + ": TuningParameters[" + std::to_string(i) + "]";
    if (!parameter.is_object()) throw InputError(at + ": expected an object with Name and Values");
    const std::string name = text_or(parameter, "Name", "");
    if (name.empty()) throw InputError(at + ": missing Name (a string)");
    nlohmann::json values = parameter.value("Values", nlohmann::json());
    if (values.is_string()) {
      // A Python expression: a list literal, range(), list(), a comprehension or a sum of them.
      values = nlohmann::json::array();
      for (const Value& value : evaluate_value_list(values_text(parameter), at + " (" + name + ")"))
        values.push_back(to_json(value));
    }
    ours["parameters"].push_back({{"name", name}, {"values", values}});
  }
  if (space.contains("Conditions")) {
    const auto& conditions = space["Conditions"];
    if (!conditions.is_array()) throw InputError(where + ": ConfigurationSpace.Conditions must be an array");
    for (std::size_t i = 0; i < conditions.size(); ++i) {
      const std::string expression = text_or(conditions[i], "Expression", "");
      if (expression.empty())
        throw InputError(where + ": Conditions[" + std::to_string(i) + "]: expected an object with an Expression string");
      ours["constraints"].push_back(expression);
    }
  }
  return SearchSpace::from_json(ours, where);
}

}  // namespace ktune
