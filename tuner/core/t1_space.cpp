#include "tuner/core/t1_space.hpp"

#include <fstream>

#include "tuner/core/errors.hpp"

namespace ktune {

SearchSpace load_t1_space(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError(file.string() + ": cannot open the T1 file");
  nlohmann::json t1;
  try {
    t1 = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file.string() + ": not valid JSON (" + e.what() + ")");
  }
  const std::string where = file.string();
  if (!t1.contains("ConfigurationSpace") || !t1["ConfigurationSpace"].contains("TuningParameters"))
    throw InputError(where + ": not a T1 spec (no ConfigurationSpace.TuningParameters)");
  const auto& space = t1["ConfigurationSpace"];

  nlohmann::json ours = {{"family", t1.value("General", nlohmann::json::object()).value("BenchmarkName", "t1")},
                         {"backend", "t1"},
                         {"parameters", nlohmann::json::array()},
                         {"constraints", nlohmann::json::array()}};
  if (t1.contains("KernelSpecification"))
    ours["backend"] = t1["KernelSpecification"].value("Language", "t1");
  const auto& parameters = space["TuningParameters"];
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto& parameter = parameters[i];
    const std::string at = where + ": TuningParameters[" + std::to_string(i) + "]";
    const std::string name = parameter.value("Name", "");
    if (name.empty()) throw InputError(at + ": missing Name");
    nlohmann::json values = parameter.value("Values", nlohmann::json());
    if (values.is_string()) {
      const std::string text = values.get<std::string>();
      values = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (values.is_discarded() || !values.is_array())
        throw InputError(at + " (" + name + "): Values \"" + text +
                         "\" is a Python computation; only list literals such as \"[1, 2, 4]\" are read");
    }
    ours["parameters"].push_back({{"name", name}, {"values", values}});
  }
  if (space.contains("Conditions"))
    for (const auto& condition : space["Conditions"]) ours["constraints"].push_back(condition.at("Expression"));
  return SearchSpace::from_json(ours, where);
}

}  // namespace ktune
