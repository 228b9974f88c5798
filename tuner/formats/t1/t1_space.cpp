#include "tuner/formats/t1/t1_space.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>

#include "tuner/core/errors.hpp"
#include "tuner/core/json_file.hpp"
#include "tuner/formats/t1/value_list.hpp"

namespace ktune {

nlohmann::json read_t1_json(const std::filesystem::path& file) {
  std::ifstream in = open_json_file(file, "a T1 file", "check the path given to --t1");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file.string() + ": not valid JSON (" + parse_error_text(e) + ")");
  }
}

SearchSpace load_t1_space(const std::filesystem::path& file) { return t1_space_from_json(read_t1_json(file), file.string()); }

std::string t1_benchmark_name(const nlohmann::json& t1) {
  for (const auto& [section, key] : {std::pair{"General", "BenchmarkName"}, std::pair{"KernelSpecification", "KernelName"}})
    if (t1.is_object() && t1.contains(section) && t1[section].is_object() && t1[section].contains(key) &&
        t1[section][key].is_string() && !t1[section][key].get<std::string>().empty())
      return t1[section][key].get<std::string>();
  return "t1";
}

std::vector<std::int64_t> t1_problem_size(const nlohmann::json& t1, const std::string& where) {
  if (!t1.is_object() || !t1.contains("KernelSpecification") || !t1["KernelSpecification"].is_object() ||
      !t1["KernelSpecification"].contains("ProblemSize"))
    return {};
  const auto& size = t1["KernelSpecification"]["ProblemSize"];
  const nlohmann::json list = size.is_array() ? size : nlohmann::json::array({size});
  std::vector<std::int64_t> sizes;
  for (const auto& entry : list) {
    if (!entry.is_number_integer() || entry.get<std::int64_t>() < 1)
      throw InputError(where + ": KernelSpecification.ProblemSize: expected positive whole numbers, got " + size.dump());
    sizes.push_back(entry.get<std::int64_t>());
  }
  return sizes;
}

std::string substitute_problem_size(const std::string& text, const std::vector<std::int64_t>& sizes,
                                    const std::string& where) {
  static const std::regex reference(R"(ProblemSize\s*\[\s*([0-9]{1,6})\s*\])");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), reference);
  std::size_t last = 0;
  for (auto match = begin; match != std::sregex_iterator(); ++match) {
    const std::size_t index = std::stoul((*match)[1].str());
    if (index >= sizes.size())
      throw InputError(where + ": \"" + text + "\" reads ProblemSize[" + std::to_string(index) + "] but ProblemSize has " +
                       std::to_string(sizes.size()) + " entries");
    out += text.substr(last, static_cast<std::size_t>(match->position()) - last) + std::to_string(sizes[index]);
    last = static_cast<std::size_t>(match->position() + match->length());
  }
  return out + text.substr(last);
}

namespace {

// The launch expressions of a KernelSpecification (see the header).
nlohmann::json t1_launch(const nlohmann::json& kernel, const std::vector<std::int64_t>& sizes, const std::string& where) {
  nlohmann::json launch = nlohmann::json::object();
  const auto axis_text = [&](const char* member, const char* axis) -> std::string {
    if (!kernel.contains(member) || !kernel[member].is_object() || !kernel[member].contains(axis)) return "1";
    const auto& value = kernel[member][axis];
    if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
    if (!value.is_string())
      throw InputError(where + ": KernelSpecification." + member + "." + axis + ": expected an expression string");
    return "(" + substitute_problem_size(value.get<std::string>(), sizes, where + ": KernelSpecification." + member) + ")";
  };
  if (kernel.contains("GlobalSizeType") && !kernel["GlobalSizeType"].is_string())
    throw InputError(where + ": KernelSpecification.GlobalSizeType: expected a string (\"CUDA\" or \"OpenCL\")");
  const bool grid_in_blocks = kernel.value("GlobalSizeType", std::string("OpenCL")) == "CUDA";
  for (const auto& [axis, lower] : {std::pair{"X", "x"}, std::pair{"Y", "y"}, std::pair{"Z", "z"}}) {
    const std::string block = axis_text("LocalSize", axis);
    const std::string global = axis_text("GlobalSize", axis);
    launch[std::string("block_") + lower] = block;
    launch[std::string("grid_") + lower] = grid_in_blocks ? global : "ceil_div(" + global + ", " + block + ")";
  }
  if (kernel.contains("SharedMemory") && kernel["SharedMemory"].is_number_integer())
    launch["shared_bytes"] = std::to_string(kernel["SharedMemory"].get<std::int64_t>());
  return launch;
}

std::string lower_case(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

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

  const nlohmann::json kernel = t1.value("KernelSpecification", nlohmann::json::object());
  nlohmann::json ours = {{"family", t1_benchmark_name(t1)},
                         {"backend", lower_case(text_or(kernel, "Language", "t1"))},
                         {"parameters", nlohmann::json::array()},
                         {"constraints", nlohmann::json::array()}};
  const auto& parameters = space["TuningParameters"];
  nlohmann::json defaults = nlohmann::json::object();
  bool all_defaults = true;
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
      const std::string text = values.get<std::string>();
      values = nlohmann::json::array();
      for (const Value& value : evaluate_value_list(text, at + " (" + name + ")"))
        values.push_back(to_json(value));
    }
    ours["parameters"].push_back({{"name", name}, {"values", values}});
    // Each parameter's Default, when every parameter has one of its values, is the space's
    // default config: a tune measures it first and reports the speed-up over it.
    if (parameter.contains("Default") && std::find(values.begin(), values.end(), parameter["Default"]) != values.end())
      defaults[name] = parameter["Default"];
    else
      all_defaults = false;
  }
  if (all_defaults && !defaults.empty()) ours["default"] = defaults;
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
  if (kernel.is_object() && kernel.contains("LocalSize"))
    ours["launch"] = t1_launch(kernel, t1_problem_size(t1, where), where);
  return SearchSpace::from_json(ours, where);
}

}  // namespace ktune
