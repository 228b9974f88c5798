#include "tuner/formats/t1/t1_space.hpp"

#include <algorithm>
#include <array>
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

namespace {

// `text` with each ProblemSize[i] replaced by replacement(i); InputError for an index of `count`
// or more.
template <typename Replacement>
std::string replace_problem_size(const std::string& text, std::size_t count, const std::string& where,
                                 Replacement replacement) {
  static const std::regex reference(R"(ProblemSize\s*\[\s*([0-9]{1,6})\s*\])");
  std::string out;
  std::size_t last = 0;
  for (auto match = std::sregex_iterator(text.begin(), text.end(), reference); match != std::sregex_iterator(); ++match) {
    const std::size_t index = std::stoul((*match)[1].str());
    if (index >= count)
      throw InputError(where + ": \"" + text + "\" reads ProblemSize[" + std::to_string(index) + "] but ProblemSize has " +
                       std::to_string(count) + " entries");
    out += text.substr(last, static_cast<std::size_t>(match->position()) - last) + replacement(index);
    last = static_cast<std::size_t>(match->position() + match->length());
  }
  return out + text.substr(last);
}

}  // namespace

std::string substitute_problem_size(const std::string& text, const std::vector<std::int64_t>& sizes,
                                    const std::string& where) {
  return replace_problem_size(text, sizes.size(), where, [&](std::size_t i) { return std::to_string(sizes[i]); });
}

std::string problem_size_names(const std::string& text, std::size_t count, const std::string& where) {
  return replace_problem_size(text, count, where, [](std::size_t i) { return "problem_size_" + std::to_string(i); });
}

namespace {

// An expression member of the spec (a string, or a whole number) as expression text, with every
// ProblemSize[i] read as the problem's dim problem_size_i, so a --shape override moves the launch
// with the buffers.
std::string t1_expression(const nlohmann::json& value, const std::vector<std::int64_t>& sizes, const std::string& where) {
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (!value.is_string() || value.get<std::string>().empty())
    throw InputError(where + ": expected an expression string (or a whole number), got " + value.dump());
  return "(" + problem_size_names(value.get<std::string>(), sizes.size(), where) + ")";
}

bool is_parameter(const nlohmann::json& parameters, const std::string& name) {
  for (const auto& parameter : parameters)
    if (parameter.is_object() && parameter.value("Name", std::string()) == name) return true;
  return false;
}

}  // namespace

T1Geometry t1_geometry(const nlohmann::json& t1, const std::string& where) {
  T1Geometry geometry;
  const nlohmann::json kernel = t1.value("KernelSpecification", nlohmann::json::object());
  const nlohmann::json parameters =
      t1.contains("ConfigurationSpace") && t1["ConfigurationSpace"].is_object()
          ? t1["ConfigurationSpace"].value("TuningParameters", nlohmann::json::array())
          : nlohmann::json::array();
  const std::vector<std::int64_t> sizes = t1_problem_size(t1, where);
  const std::string at = where + ": KernelSpecification.";
  static constexpr std::array<const char*, 3> kAxes{"X", "Y", "Z"};
  static constexpr std::array<const char*, 3> kLower{"x", "y", "z"};
  for (const char* axis : kAxes) {
    const std::string member = std::string("GridDiv") + axis;
    if (!kernel.contains(member) || kernel[member].is_null()) continue;
    if (!kernel[member].is_array())
      throw InputError(at + member + ": expected a list of expressions whose product divides ProblemSize, got " +
                       kernel[member].dump());
    if (!kernel[member].empty()) geometry.rule = T1GeometryRule::grid_div;
  }
  if (kernel.contains("SharedMemory") && !kernel["SharedMemory"].is_null()) {
    if (!kernel["SharedMemory"].is_number_integer() || kernel["SharedMemory"].get<std::int64_t>() < 0)
      throw InputError(at + "SharedMemory: expected a whole number of bytes, got " + kernel["SharedMemory"].dump());
    if (kernel["SharedMemory"].get<std::int64_t>() > 0)
      geometry.launch["shared_bytes"] = std::to_string(kernel["SharedMemory"].get<std::int64_t>());
  }

  if (geometry.rule == T1GeometryRule::grid_div) {
    // Kernel Tuner's rule (tune_kernel_T1, util.get_grid_dimensions and
    // get_thread_block_dimensions): the block is the parameters block_size_x/y/z (256, 1, 1 when
    // a space has none); grid axis i is ceil(ProblemSize[i] / the product of GridDiv<I>), where a
    // missing or empty GridDiv divides by that axis's block size parameter, or by 1. ProblemSize
    // has three axes, the missing ones 1. LocalSize and GlobalSize are not read.
    for (std::size_t a = 0; a < 3; ++a) {
      const std::string block_name = std::string("block_size_") + kLower[a];
      geometry.launch[std::string("block_") + kLower[a]] =
          is_parameter(parameters, block_name) ? block_name : (a == 0 ? "256" : "1");
      const std::string member = std::string("GridDiv") + kAxes[a];
      std::string divisor;
      if (kernel.contains(member) && kernel[member].is_array() && !kernel[member].empty()) {
        for (std::size_t d = 0; d < kernel[member].size(); ++d)
          divisor += (divisor.empty() ? "" : " * ") +
                     t1_expression(kernel[member][d], sizes, at + member + "[" + std::to_string(d) + "]");
      } else {
        divisor = is_parameter(parameters, block_name) ? block_name : "1";
      }
      const std::string size = a < sizes.size() ? "problem_size_" + std::to_string(a) : "1";
      geometry.launch[std::string("grid_") + kLower[a]] = "ceil_div(" + size + ", " + divisor + ")";
    }
    geometry.description =
        "Kernel Tuner's GridDiv rule: grid = ceil(ProblemSize / product of GridDivX/Y/Z), block = "
        "block_size_x/y/z (GlobalSize and LocalSize are not read)";
    return geometry;
  }

  if (!kernel.contains("LocalSize")) return geometry;  // no launch: ktune space --t1 on a space-only spec
  if (kernel.contains("GlobalSizeType") && !kernel["GlobalSizeType"].is_string())
    throw InputError(at + "GlobalSizeType: expected a string (\"CUDA\" or \"OpenCL\")");
  const std::string global_type = kernel.value("GlobalSizeType", std::string("OpenCL"));
  if (global_type != "CUDA" && global_type != "OpenCL")
    throw InputError(at + "GlobalSizeType: '" + global_type +
                     "' is not supported; use \"CUDA\" (GlobalSize counts blocks) or \"OpenCL\" (it counts threads)");
  const bool grid_in_blocks = global_type == "CUDA";
  const auto axis_text = [&](const char* member, const char* axis) -> std::string {
    if (!kernel.contains(member) || !kernel[member].is_object())
      throw InputError(at + member + ": expected an object with X (and Y, Z) expressions; or give GridDivX/Y/Z");
    if (!kernel[member].contains(axis)) return "1";
    return t1_expression(kernel[member][axis], sizes, at + member + "." + axis);
  };
  for (std::size_t a = 0; a < 3; ++a) {
    const std::string block = axis_text("LocalSize", kAxes[a]);
    const std::string global = axis_text("GlobalSize", kAxes[a]);
    geometry.launch[std::string("block_") + kLower[a]] = block;
    geometry.launch[std::string("grid_") + kLower[a]] = grid_in_blocks ? global : "ceil_div(" + global + ", " + block + ")";
  }
  geometry.rule = T1GeometryRule::global_size;
  geometry.description = grid_in_blocks
                             ? "GlobalSize in blocks (GlobalSizeType CUDA), block = LocalSize; the spec has no GridDiv"
                             : "GlobalSize in threads (GlobalSizeType OpenCL), grid = ceil(GlobalSize / LocalSize), "
                               "block = LocalSize; the spec has no GridDiv";
  return geometry;
}

std::string_view to_string(T1GeometryRule rule) {
  switch (rule) {
    case T1GeometryRule::grid_div: return "GridDiv";
    case T1GeometryRule::global_size: return "GlobalSize";
    case T1GeometryRule::none: return "none";
  }
  return "none";
}

namespace {

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
  const T1Geometry geometry = t1_geometry(t1, where);
  if (geometry.rule != T1GeometryRule::none) ours["launch"] = geometry.launch;
  return SearchSpace::from_json(ours, where);
}

}  // namespace ktune
