#include "tuner/core/search_space.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "tuner/core/errors.hpp"
#include "tuner/core/json_file.hpp"

namespace ktune {
namespace {

nlohmann::json read_json_file(const std::filesystem::path& file) {
  std::ifstream in = open_json_file(file, "a search-space file", "check the path");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file.string() + ": not valid JSON (" + parse_error_text(e) + ")");
  }
}

const nlohmann::json& require(const nlohmann::json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key))
    throw InputError(where + ": missing required key \"" + key + "\"");
  return object.at(key);
}

std::string require_string(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto& value = require(object, key, where);
  if (!value.is_string()) throw InputError(where + "." + key + ": expected a string, got " + value.dump());
  return value.get<std::string>();
}

// An optional string member: `fallback` when absent, InputError when present but not a string.
std::string optional_string(const nlohmann::json& object, const char* key, const std::string& fallback,
                            const std::string& where) {
  if (!object.is_object() || !object.contains(key)) return fallback;
  const auto& value = object.at(key);
  if (!value.is_string()) throw InputError(where + "." + key + ": expected a string, got " + value.dump());
  return value.get<std::string>();
}

// Slot layout shared by enumeration, checking and launch evaluation: parameters first (slot i is
// parameter i), then the context names in map order.
std::vector<std::string> slot_names(const std::vector<Parameter>& parameters, const SpaceContext& context) {
  std::vector<std::string> names;
  for (const auto& parameter : parameters) names.push_back(parameter.name);
  for (const auto& [name, value] : context) names.push_back(name);
  return names;
}

std::vector<Value> slot_values(const std::vector<Parameter>& parameters, const SpaceContext& context) {
  std::vector<Value> values(parameters.size(), Value{std::int64_t{0}});
  for (const auto& [name, value] : context) values.push_back(value);
  return values;
}

// Replaces each whole identifier of `text` that names an entry of `named` (outside string
// literals, and not a function call) by that entry's text in parentheses: how constraints read
// launch values and derived values without a second evaluation pass.
std::string inline_names(std::string_view text, const std::vector<std::pair<std::string, std::string>>& named) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      const std::size_t end = text.find(c, i + 1);
      const std::size_t stop = end == std::string_view::npos ? text.size() : end + 1;
      out.append(text.substr(i, stop - i));
      i = stop;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = i;
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
      const std::string_view word = text.substr(i, end - i);
      std::size_t next = end;
      while (next < text.size() && text[next] == ' ') ++next;
      const bool call = next < text.size() && text[next] == '(';
      const auto found = std::find_if(named.begin(), named.end(), [&](const auto& entry) { return entry.first == word; });
      if (found != named.end() && !call)
        out += "(" + found->second + ")";
      else
        out.append(word);
      i = end;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// The entries of an object of name: expression text (the "derived" and "launch" sections).
std::vector<std::pair<std::string, std::string>> read_expression_texts(const nlohmann::json& json, const char* section,
                                                                       const std::string& where) {
  std::vector<std::pair<std::string, std::string>> read;
  if (!json.contains(section)) return read;
  const auto& object = json.at(section);
  const std::string at = where + "." + section;
  if (!object.is_object()) throw InputError(at + ": expected an object of name: expression");
  for (const auto& [name, text] : object.items()) {
    if (!text.is_string()) throw InputError(at + "." + name + ": expected an expression string");
    read.emplace_back(name, text.get<std::string>());
  }
  return read;
}

// `text` with every name of `named` inlined, however deep they refer to each other (JSON objects
// keep no order, so none is assumed); a name that leads back to itself is an InputError.
std::string resolve_names(const std::string& text, const std::vector<std::pair<std::string, std::string>>& named,
                          const std::string& where) {
  // Names used twice double the text at each level: a chain of them is cut off, not followed
  // until memory runs out.
  constexpr std::size_t kMaxLength = 1 << 16;
  std::string resolved = text;
  for (std::size_t round = 0; round <= named.size(); ++round) {
    std::string next = inline_names(resolved, named);
    if (next == resolved) return resolved;
    if (next.size() > kMaxLength)
      throw InputError(where + ": its derived and launch values expand past " + std::to_string(kMaxLength) +
                       " characters");
    resolved = std::move(next);
  }
  throw InputError(where + ": its derived or launch values refer to themselves");
}

}  // namespace

ValidConfigs::ValidConfigs(std::vector<Parameter> parameters, std::vector<std::uint32_t> indices,
                           std::uint64_t total, double seconds)
    : parameters_(std::move(parameters)), indices_(std::move(indices)), total_(total), seconds_(seconds) {}

Config ValidConfigs::config(std::size_t i) const {
  Config config;
  const std::size_t width = parameters_.size();
  for (std::size_t p = 0; p < width; ++p) {
    const auto& parameter = parameters_[p];
    config.values.emplace_back(parameter.name, parameter.values[indices_[i * width + p]]);
  }
  return config;
}

std::optional<std::size_t> ValidConfigs::find(const Config& config) const {
  for (std::size_t i = 0; i < size(); ++i)
    if (this->config(i).key() == config.key()) return i;
  return std::nullopt;
}

SearchSpace SearchSpace::load(const std::filesystem::path& file) {
  SearchSpace space = from_json(read_json_file(file), file.string());
  space.source_ = file.string();
  // ktune's kernels take their parameters as int (a #define, a specialization constant, a CPU
  // kernel's argument): a value past that range overflowed inside a kernel (2^63-1 gave NaN).
  // A T1 spec's own kernel is the user's and keeps whatever its Values say.
  for (std::size_t p = 0; p < space.parameters_.size(); ++p)
    for (const Value& value : space.parameters_[p].values) {
      const auto* integer = std::get_if<std::int64_t>(&value);
      const auto* real = std::get_if<double>(&value);
      if ((integer && (*integer < std::numeric_limits<std::int32_t>::min() ||
                       *integer > std::numeric_limits<std::int32_t>::max())) ||
          (real && (!std::isfinite(*real) || std::fabs(*real) > std::numeric_limits<std::int32_t>::max())))
        throw InputError(file.string() + ": parameter '" + space.parameters_[p].name + "' has the value " +
                         to_string(value) + ", outside what a kernel parameter may take (" +
                         std::to_string(std::numeric_limits<std::int32_t>::min()) + " to " +
                         std::to_string(std::numeric_limits<std::int32_t>::max()) + ")");
    }
  return space;
}

namespace {

// A config the file spells out in full ("default", each of "starting_points"): every parameter
// with one of its values, nothing else, in the space's parameter order.
Config read_full_config(const nlohmann::json& json, const std::vector<Parameter>& parameters, const std::string& at) {
  Config given = Config::from_json(json, at);
  Config ordered;
  for (const auto& parameter : parameters) {
    if (!given.has(parameter.name)) throw InputError(at + ": no value for parameter '" + parameter.name + "'");
    const Value& value = given.at(parameter.name);
    if (std::find(parameter.values.begin(), parameter.values.end(), value) == parameter.values.end())
      throw InputError(at + "." + parameter.name + ": " + to_string(value) + " is not one of the parameter's values");
    ordered.values.emplace_back(parameter.name, value);
  }
  if (given.values.size() != ordered.values.size()) throw InputError(at + ": names a parameter the space does not have");
  return ordered;
}

}  // namespace

SearchSpace SearchSpace::from_json(const nlohmann::json& json, const std::string& where) {
  SearchSpace space;
  space.source_ = where;
  space.family_ = require_string(json, "family", where);
  space.backend_ = require_string(json, "backend", where);

  const auto& parameters = require(json, "parameters", where);
  if (!parameters.is_array() || parameters.empty())
    throw InputError(where + ".parameters: expected a non-empty array of {\"name\", \"values\"}");
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const std::string at = where + ".parameters[" + std::to_string(i) + "]";
    Parameter parameter;
    parameter.name = require_string(parameters[i], "name", at);
    parameter.help = optional_string(parameters[i], "help", "", at);
    if (const auto flag = parameters[i].find("launch_only"); flag != parameters[i].end()) {
      if (!flag->is_boolean()) throw InputError(at + ".launch_only: expected true or false, got " + flag->dump());
      parameter.launch_only = flag->get<bool>();
    }
    // Vulkan shaders take their parameters as specialization constants, set when the pipeline is
    // created, so one SPIR-V module serves every value; only a parameter that changes the code's
    // structure ("compile_time": true) arrives as a #define and needs a module of its own.
    if (const auto flag = parameters[i].find("compile_time"); flag != parameters[i].end()) {
      if (!flag->is_boolean()) throw InputError(at + ".compile_time: expected true or false, got " + flag->dump());
      if (space.backend_ != "vulkan")
        throw InputError(at + ".compile_time: only Vulkan spaces have compile-time parameters (every " +
                         space.backend_ + " parameter is compiled in)");
      parameter.compile_time = flag->get<bool>();
    }
    if (space.backend_ == "vulkan" && !parameter.compile_time) parameter.launch_only = true;
    const auto& values = require(parameters[i], "values", at);
    if (!values.is_array() || values.empty())
      throw InputError(at + ".values: expected a non-empty array, got " + values.dump());
    for (std::size_t v = 0; v < values.size(); ++v)
      parameter.values.push_back(value_from_json(values[v], at + ".values[" + std::to_string(v) + "]"));
    if (const auto built = parameters[i].find("build_time_value"); built != parameters[i].end()) {
      if (!parameter.compile_time)
        throw InputError(at + ".build_time_value: only a compile-time parameter has one (\"compile_time\": true)");
      const Value value = value_from_json(*built, at + ".build_time_value");
      if (std::find(parameter.values.begin(), parameter.values.end(), value) == parameter.values.end())
        throw InputError(at + ".build_time_value: " + to_string(value) + " is not one of the parameter's values");
      parameter.build_time_value = value;
    }
    for (const auto& other : space.parameters_)
      if (other.name == parameter.name) throw InputError(at + ": duplicate parameter '" + parameter.name + "'");
    space.parameters_.push_back(std::move(parameter));
  }

  // Derived values and launch geometry first: constraints may read both (say, a tile's
  // shared_bytes checked against the device's limit is the launch's own shared_bytes). A derived
  // value may not take a parameter's name; a launch value may (CPU spaces launch `threads`
  // threads), and then the name reads the parameter.
  const auto derived = read_expression_texts(json, "derived", where);
  const auto launch = read_expression_texts(json, "launch", where);
  const auto is_parameter = [&](const std::string& name) {
    return std::any_of(space.parameters_.begin(), space.parameters_.end(),
                       [&](const Parameter& parameter) { return parameter.name == name; });
  };
  std::vector<std::pair<std::string, std::string>> named;
  for (const auto& [name, text] : derived) {
    if (is_parameter(name)) throw InputError(where + ".derived." + name + ": a parameter has this name");
    named.emplace_back(name, text);
  }
  for (const auto& entry : launch) {
    const std::string& name = entry.first;  // not a structured binding: lambdas capture it
    const bool clash = std::any_of(derived.begin(), derived.end(), [&](const auto& other) { return other.first == name; });
    if (clash) throw InputError(where + ".launch." + name + ": also the name of a derived value");
    if (!is_parameter(name)) named.push_back(entry);
  }
  for (const auto& [name, text] : derived)  // a bad one is reported even if nothing reads it
    Expression::parse(resolve_names(text, named, where + ".derived." + name), where + ".derived." + name);
  for (const auto& [name, text] : launch) {
    const std::string at = where + ".launch." + name;
    space.launch_.emplace_back(name, Expression::parse(resolve_names(text, named, at), at));
  }

  if (json.contains("constraints")) {
    const auto& constraints = json.at("constraints");
    if (!constraints.is_array()) throw InputError(where + ".constraints: expected an array");
    for (std::size_t i = 0; i < constraints.size(); ++i) {
      const std::string at = where + ".constraints[" + std::to_string(i) + "]";
      const auto& entry = constraints[i];
      std::string text;
      std::string name;
      if (entry.is_string()) {
        text = entry.get<std::string>();
        name = text;
      } else {
        text = require_string(entry, "expr", at);
        name = optional_string(entry, "name", text, at);
      }
      space.constraints_.push_back({name, Expression::parse(resolve_names(text, named, at), at)});
    }
  }

  if (json.contains("default")) space.default_config_ = read_full_config(json.at("default"), space.parameters_, where + ".default");
  if (json.contains("starting_points")) {
    const std::string at = where + ".starting_points";
    const auto& points = json.at("starting_points");
    if (!points.is_array()) throw InputError(at + ": expected an array of configs");
    for (std::size_t i = 0; i < points.size(); ++i)
      space.starting_points_.push_back(read_full_config(points[i], space.parameters_, at + "[" + std::to_string(i) + "]"));
  }
  return space;
}

std::vector<std::string> SearchSpace::launch_only_names() const {
  std::vector<std::string> names;
  for (const auto& parameter : parameters_)
    if (parameter.launch_only) names.push_back(parameter.name);
  return names;
}

std::vector<std::string> SearchSpace::parameter_names() const {
  std::vector<std::string> names;
  for (const auto& parameter : parameters_) names.push_back(parameter.name);
  return names;
}

std::uint64_t SearchSpace::total() const {
  std::uint64_t total = 1;
  for (const auto& parameter : parameters_) {
    const std::uint64_t n = parameter.values.size();
    if (total > std::numeric_limits<std::uint64_t>::max() / n) return std::numeric_limits<std::uint64_t>::max();
    total *= n;
  }
  return total;
}

std::size_t max_space_bytes() {
  std::size_t mib = kDefaultMaxSpaceMiB;
  if (const char* text = std::getenv("KTUNE_MAX_SPACE_MIB"); text && *text) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (*end != '\0' || value == 0 || value > (1ull << 30))
      throw InputError(std::string("KTUNE_MAX_SPACE_MIB='") + text + "' is not a number of MiB from 1 to 1073741824");
    mib = static_cast<std::size_t>(value);
  }
  return mib << 20;
}

namespace {

[[noreturn]] void refuse_space_size(const std::string& source, std::size_t depth, std::size_t max_bytes) {
  const std::size_t configs = max_bytes / (sizeof(std::uint32_t) * depth);
  throw InputError((source.empty() ? std::string("the search space") : source) + ": more than " +
                   std::to_string(configs) + " valid configs, which would need over " +
                   std::to_string(max_bytes >> 20) + " MiB to enumerate; narrow its parameters' values or "
                   "add constraints, or raise the limit with KTUNE_MAX_SPACE_MIB");
}

}  // namespace

ValidConfigs SearchSpace::enumerate(const SpaceContext& context) const {
  const auto start = std::chrono::steady_clock::now();
  const auto names = slot_names(parameters_, context);
  const std::size_t depth = parameters_.size();

  // Each constraint is checked at the depth of the last parameter it reads; constraints that
  // read no parameter are checked once, before the walk.
  std::vector<std::vector<Expression>> checks_at(depth);
  std::vector<Expression> upfront;
  for (const auto& constraint : constraints_) {
    Expression bound = constraint.expression;
    bound.bind(names);
    int level = -1;
    for (const auto& variable : bound.variables())
      for (std::size_t p = 0; p < depth; ++p)
        if (parameters_[p].name == variable) level = std::max(level, static_cast<int>(p));
    if (level < 0)
      upfront.push_back(std::move(bound));
    else
      checks_at[static_cast<std::size_t>(level)].push_back(std::move(bound));
  }

  std::vector<Value> slots = slot_values(parameters_, context);
  std::vector<std::uint32_t> valid;
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (const auto& check : upfront)
    if (!check.evaluate_bool(slots)) return ValidConfigs(parameters_, {}, total(), seconds());

  const std::size_t max_bytes = max_space_bytes();
  const std::size_t max_indices = max_bytes / sizeof(std::uint32_t);
  // Iterative depth-first walk: choice[d] is the value index of parameter d.
  std::vector<std::uint32_t> choice(depth, 0);
  std::size_t d = 0;
  while (true) {
    if (choice[d] < parameters_[d].values.size()) {
      slots[d] = parameters_[d].values[choice[d]];
      bool ok = true;
      for (const auto& check : checks_at[d])
        if (!check.evaluate_bool(slots)) {
          ok = false;
          break;
        }
      if (ok && d + 1 == depth) {
        if (valid.size() + depth > max_indices) refuse_space_size(source_, depth, max_bytes);
        // Grown by doubling, but never past the limit (a doubling would otherwise ask for twice it).
        if (valid.size() + depth > valid.capacity())
          valid.reserve(std::min(max_indices, std::max(valid.capacity() * 2, std::size_t{1024} * depth)));
        valid.insert(valid.end(), choice.begin(), choice.end());
        ++choice[d];
      } else if (ok) {
        ++d;
        choice[d] = 0;
      } else {
        ++choice[d];
      }
    } else {
      if (d == 0) break;
      --d;
      ++choice[d];
    }
  }
  return ValidConfigs(parameters_, std::move(valid), total(), seconds());
}

std::vector<std::string> SearchSpace::violated(const Config& config, const SpaceContext& context) const {
  const auto names = slot_names(parameters_, context);
  std::vector<Value> slots = slot_values(parameters_, context);
  for (std::size_t p = 0; p < parameters_.size(); ++p) slots[p] = config.at(parameters_[p].name);
  std::vector<std::string> failed;
  for (const auto& constraint : constraints_) {
    Expression bound = constraint.expression;
    bound.bind(names);
    if (!bound.evaluate_bool(slots)) failed.push_back(constraint.name);
  }
  return failed;
}

std::map<std::string, Value> SearchSpace::launch(const Config& config, const SpaceContext& context) const {
  const auto names = slot_names(parameters_, context);
  std::vector<Value> slots = slot_values(parameters_, context);
  for (std::size_t p = 0; p < parameters_.size(); ++p) slots[p] = config.at(parameters_[p].name);
  std::map<std::string, Value> geometry;
  for (const auto& [name, expression] : launch_) {
    Expression bound = expression;
    bound.bind(names);
    geometry[name] = bound.evaluate(slots);
  }
  return geometry;
}

}  // namespace ktune
