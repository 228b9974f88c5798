// Header and JSON exporter. The header is a self-contained C++20 file (standard headers only):
// named structs for the config and the shape, one designated-initializer entry per tuned
// (backend, device, precision, shape), the search space's default, and a constexpr lookup with
// the fallback chain device -> architecture -> vendor -> default. This file writes the family's
// data; the lookup code between the data is copied from the sections of
// db/export/lookup_rule.hpp and tuned_lookup.hpp, real headers embedded at build time. Entries are validated
// (every parameter and dimension present, names usable as C++ identifiers), deduplicated (the
// lookup cannot tell apart two entries of the same backend, device name, precision and shape,
// so only the most recently measured one is kept) and sorted, so the output is diffable.
#include "db/export/header_exporter.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <variant>

#include "ktune/build_info.hpp"
#include "ktune/embedded/tuned_lookup.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/output_file.hpp"
#include "tuner/core/precision.hpp"

namespace ktune {
namespace {

// ---------------------------------------------------------------------------------------------
// Names

// Reserved words of C++20 (keywords and alternative tokens) plus "std", which as a member name
// would hide the namespace from the member declarations that follow it.
constexpr std::string_view kReservedNames[] = {
    "alignas",   "alignof",      "and",          "and_eq",      "asm",         "auto",
    "bitand",    "bitor",        "bool",         "break",       "case",        "catch",
    "char",      "char8_t",      "char16_t",     "char32_t",    "class",       "compl",
    "concept",   "const",        "consteval",    "constexpr",   "constinit",   "const_cast",
    "continue",  "co_await",     "co_return",    "co_yield",    "decltype",    "default",
    "delete",    "do",           "double",       "dynamic_cast", "else",       "enum",
    "explicit",  "export",       "extern",       "false",       "float",       "for",
    "friend",    "goto",         "if",           "inline",      "int",         "long",
    "mutable",   "namespace",    "new",          "noexcept",    "not",         "not_eq",
    "nullptr",   "operator",     "or",           "or_eq",       "private",     "protected",
    "public",    "register",     "reinterpret_cast", "requires", "return",     "short",
    "signed",    "sizeof",       "static",       "static_assert", "static_cast", "struct",
    "switch",    "template",     "this",         "thread_local", "throw",      "true",
    "try",       "typedef",      "typeid",       "typename",    "union",       "unsigned",
    "using",     "virtual",      "void",         "volatile",    "wchar_t",     "while",
    "xor",       "xor_eq",       "std",          "int64_t",     "size_t",      "string_view",
};

bool is_identifier(std::string_view name) {
  if (name.empty()) return false;
  const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name.front())) return false;
  for (char c : name)
    if (!alpha(c) && !digit(c)) return false;
  if (name.find("__") != std::string_view::npos) return false;  // reserved for the implementation
  if (name.size() > 1 && name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z') return false;
  return std::find(std::begin(kReservedNames), std::end(kReservedNames), name) == std::end(kReservedNames);
}

void check_names(const std::vector<std::string>& names, const std::string& what) {
  std::set<std::string> seen;
  for (const auto& name : names) {
    if (!is_identifier(name))
      throw InputError("export: " + what + " name '" + name +
                       "' cannot be a C++ field name (it must be an identifier, not a keyword)");
    if (!seen.insert(name).second) throw InputError("export: " + what + " '" + name + "' is listed twice");
  }
}

// The same normalisation as the generated header's same_name() (db/export/tuned_lookup.hpp):
// ASCII case folded, runs of whitespace collapsed to one space, leading and trailing whitespace
// dropped.
std::string normalise_name(std::string_view name) {
  std::string out;
  bool pending_space = false;
  for (char c : name) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// C++ literals

// A string literal that is valid C++ whatever the bytes: quotes, backslashes, control and
// non-ASCII bytes are escaped (octal escapes stop after three digits, unlike \x).
std::string cpp_string(std::string_view text) {
  std::string out = "\"";
  char previous = 0;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '?' && previous == '?') {
      out += "\\?";  // no trigraphs
    } else if (byte < 0x20 || byte >= 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\%03o", static_cast<unsigned>(byte));
      out += escaped;
    } else {
      out += c;
    }
    previous = c;
  }
  return out + "\"";
}

std::string cpp_int(std::int64_t value) {
  if (value == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807 - 1)";
  return std::to_string(value);
}

// Shortest text that reads back as the same double, always spelled as a floating literal.
std::string cpp_double(double value, const std::string& where) {
  if (!std::isfinite(value)) throw InputError("export: " + where + " is not a finite number");
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// Text for comments: control characters would end or continue the comment line.
std::string comment_text(std::string_view text) {
  std::string out;
  for (char c : text) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  if (!out.empty() && out.back() == '\\') out += '.';  // a trailing backslash splices lines
  return out;
}

// ---------------------------------------------------------------------------------------------
// Validation, deduplication, order

enum class FieldType { int64, real, text };

std::string_view cpp_type(FieldType type) {
  switch (type) {
    case FieldType::int64: return "std::int64_t";
    case FieldType::real: return "double";
    case FieldType::text: return "std::string_view";
  }
  return "std::int64_t";
}

std::string_view json_type(FieldType type) {
  switch (type) {
    case FieldType::int64: return "int";
    case FieldType::real: return "real";
    case FieldType::text: return "string";
  }
  return "int";
}

std::string entry_label(const BestMeasurement& entry) {
  return "measurement " + std::to_string(entry.measurement_id) + " (" + entry.device.name + ", " +
         entry.problem.describe() + ")";
}

// Checks that `config` has exactly the parameters of the family.
void check_config(const Config& config, const std::vector<std::string>& param_names,
                  const std::string& where) {
  for (const auto& name : param_names)
    if (!config.has(name))
      throw InputError("export: " + where + " has no value for parameter '" + name +
                       "'; its parameters are: " + config.describe());
  for (const auto& [name, value] : config.values)
    if (std::find(param_names.begin(), param_names.end(), name) == param_names.end())
      throw InputError("export: " + where + " has parameter '" + name +
                       "' that the family does not declare; it declares: " + join_names(param_names));
}

void check_problem(const BestMeasurement& entry, const ExportFamily& input) {
  if (!entry.family.empty() && entry.family != input.family)
    throw InputError("export: " + entry_label(entry) + " belongs to family '" + entry.family +
                     "', not '" + input.family + "'");
  if (entry.backend != input.backend)
    throw InputError("export: " + entry_label(entry) + " was measured on backend '" + entry.backend +
                     "', not '" + input.backend + "', whose header this is");
  for (const auto& name : input.dim_names) entry.problem.dim(name);  // throws naming the dims
  if (entry.problem.dims.size() != input.dim_names.size())
    throw InputError("export: " + entry_label(entry) + " has dimensions " + entry.problem.key() +
                     " but the family declares: " + join_names(input.dim_names));
}

// One C++ type per parameter, from the values of the default and every entry: integers stay
// std::int64_t, any real makes it double, strings make it std::string_view; strings mixed with
// numbers are refused rather than converted.
std::vector<FieldType> param_types(const ExportFamily& input,
                                   const std::vector<const BestMeasurement*>& entries) {
  std::vector<FieldType> types;
  for (const auto& name : input.param_names) {
    bool any_int = false, any_real = false, any_text = false;
    const auto see = [&](const Value& value) {
      any_int |= std::holds_alternative<std::int64_t>(value);
      any_real |= std::holds_alternative<double>(value);
      any_text |= std::holds_alternative<std::string>(value);
    };
    see(input.default_config.at(name));
    // A fraction where the search space lists only integers is a corrupt or hand-edited row (a
    // header of doubles for thread counts would compile and mislead).
    const bool integer_parameter = input.integer_parameters.count(name) > 0;
    for (const auto* entry : entries) {
      const Value& value = entry->config.at(name);
      const auto* real = std::get_if<double>(&value);
      if (integer_parameter && real && std::floor(*real) != *real)
        throw InputError("export: " + entry_label(*entry) + " has " + name + " = " + to_string(value) +
                         ", but the parameter takes integers (its search space lists only integers); the row was "
                         "edited or is corrupt");
      see(value);
    }
    if (any_text && (any_int || any_real))
      throw InputError("export: parameter '" + name +
                       "' has both string and numeric values; a header field needs one type");
    types.push_back(any_text ? FieldType::text : any_real ? FieldType::real : FieldType::int64);
  }
  return types;
}

struct Prepared {
  std::vector<const BestMeasurement*> entries;  // validated, deduplicated, sorted
  std::vector<FieldType> types;                 // per parameter
  std::size_t superseded = 0;                   // dropped older duplicates
};

auto order_key(const BestMeasurement& entry) {
  return std::tie(entry.backend, entry.device.vendor, entry.device.architecture, entry.device.name,
                  entry.problem.precision, entry.problem.dims, entry.measurement_id);
}

Prepared prepare(const ExportFamily& input) {
  if (!is_identifier(input.family))
    throw InputError("export: family name '" + input.family +
                     "' cannot be a C++ namespace name (it must be an identifier)");
  if (!is_identifier(input.backend))
    throw InputError("export: backend name '" + input.backend +
                     "' cannot be a C++ namespace name (it must be an identifier)");
  check_names(input.dim_names, "dimension");
  check_names(input.param_names, "parameter");
  check_config(input.default_config, input.param_names, "the default config");

  // Latest measurement per lookup key (backend, device name, precision, shape).
  std::map<std::string, const BestMeasurement*> latest;
  for (const auto& entry : input.entries) {
    check_problem(entry, input);
    check_config(entry.config, input.param_names, entry_label(entry));
    const std::string key = normalise_name(entry.backend) + '\n' + normalise_name(entry.device.name) +
                            '\n' + entry.problem.key();
    auto [it, inserted] = latest.emplace(key, &entry);
    if (!inserted &&
        std::tie(entry.measured_at, entry.measurement_id) > std::tie(it->second->measured_at, it->second->measurement_id))
      it->second = &entry;
  }
  Prepared prepared;
  for (const auto& [key, entry] : latest) prepared.entries.push_back(entry);
  prepared.superseded = input.entries.size() - prepared.entries.size();
  std::sort(prepared.entries.begin(), prepared.entries.end(),
            [](const BestMeasurement* a, const BestMeasurement* b) { return order_key(*a) < order_key(*b); });
  prepared.types = param_types(input, prepared.entries);
  return prepared;
}

// ---------------------------------------------------------------------------------------------
// Header text

std::string cpp_value(const Value& value, FieldType type, const std::string& where) {
  switch (type) {
    case FieldType::int64: return cpp_int(std::get<std::int64_t>(value));
    case FieldType::real: return cpp_double(as_double(value, where), where);
    case FieldType::text: return cpp_string(std::get<std::string>(value));
  }
  return {};
}

// "{.threads = 2, .rows_per_task = 4}"
std::string config_initializer(const Config& config, const ExportFamily& input,
                               const std::vector<FieldType>& types, const std::string& where) {
  std::string out = "{";
  for (std::size_t i = 0; i < input.param_names.size(); ++i) {
    const auto& name = input.param_names[i];
    if (i > 0) out += ", ";
    out += "." + name + " = " + cpp_value(config.at(name), types[i], where + " parameter " + name);
  }
  return out + "}";
}

std::string shape_initializer(const Problem& problem, const std::vector<std::string>& dim_names) {
  std::string out = "{";
  for (std::size_t i = 0; i < dim_names.size(); ++i) {
    if (i > 0) out += ", ";
    out += "." + dim_names[i] + " = " + cpp_int(problem.dim(dim_names[i]));
  }
  return out + "}";
}

// The launch resources of an entry; none (zeros) for one that has no GPU kernel.
EntryResources resources_of(const BestMeasurement& entry, const ExportFamily& input) {
  const auto found = input.resources.find(entry.measurement_id);
  return found == input.resources.end() ? EntryResources{} : found->second;
}

std::string render_entry(const BestMeasurement& entry, const ExportFamily& input,
                         const std::vector<FieldType>& types) {
  const std::string where = entry_label(entry);
  std::string out;
  out += "    // " + comment_text(entry.backend + " | " + entry.device.name + " | " + entry.problem.describe()) + "\n";
  out += "    {.backend = " + cpp_string(entry.backend) + ", .device = " + cpp_string(entry.device.name) +
         ", .architecture = " + cpp_string(entry.device.architecture) +
         ", .vendor = " + cpp_string(entry.device.vendor) +
         ", .precision = " + cpp_string(to_string(entry.problem.precision)) + ",\n";
  out += "     .shape = " + shape_initializer(entry.problem, input.dim_names) + ",\n";
  out += "     .config = " + config_initializer(entry.config, input, types, where) + ",\n";
  const EntryResources resources = resources_of(entry, input);
  out += "     .shared_bytes = " + cpp_int(resources.shared_bytes) + ", .threads = " + cpp_int(resources.threads) + ",\n";
  out += "     .median_ns = " + cpp_double(entry.stats.median_ns, where + " median") +
         ", .measured_at = " + cpp_string(entry.measured_at) +
         ", .ktune_version = " + cpp_string(entry.ktune_version) +
         ", .git_commit = " + cpp_string(entry.git_commit) +
         ", .measurement_id = " + cpp_int(entry.measurement_id) + "},\n";
  return out;
}

// The usage example of the top comment, with the family's own names (and a tuned device and
// shape when there is one) so it can be copied as is.
std::string usage_example(const ExportFamily& input, const Prepared& prepared) {
  const BestMeasurement* sample = prepared.entries.empty() ? nullptr : prepared.entries.front();
  std::string shape = "{";
  for (std::size_t i = 0; i < input.dim_names.size(); ++i) {
    if (i > 0) shape += ", ";
    shape += "." + input.dim_names[i] + " = " +
             std::to_string(sample ? sample->problem.dim(input.dim_names[i]) : 1024);
  }
  shape += "}";
  const auto field = [&](const std::string& value, const std::string& fallback) {
    return comment_text(cpp_string(sample ? value : fallback));
  };
  std::string out;
  out += "//   #include \"" + input.backend + "/" + input.family + ".hpp\"   // with the export folder on the include path\n";
  out += "//\n";
  out += "//   namespace tuned = ktune::tuned::" + input.backend + "::" + input.family + ";\n";
  out += "//   const tuned::DeviceQuery device{.backend = " + field(sample ? sample->backend : "", "cuda") +
         ", .device = " + field(sample ? sample->device.name : "", "NVIDIA H200") + ",\n";
  out += "//                                   .architecture = " +
         field(sample ? sample->device.architecture : "", "sm_90") +
         ", .vendor = " + field(sample ? sample->device.vendor : "", "nvidia") + "};\n";
  const std::string precision(sample ? to_string(sample->problem.precision) : "fp32");
  out += "//   const tuned::Config config = tuned::lookup(device, tuned::Shape" + shape + ", \"" +
         precision + "\");\n";
  if (!input.param_names.empty()) {
    out += "//   // config.";
    for (std::size_t i = 0; i < input.param_names.size(); ++i)
      out += (i > 0 ? ", config." : "") + input.param_names[i];
    out += "\n";
  }
  out += "//   const tuned::LookupResult found = tuned::lookup_entry(device, tuned::Shape" + shape + ");\n";
  out += "//   // found.level: which level answered; found.entry: the tuned entry and its provenance\n";
  out += "//   // (null when the default answered). Both functions are constexpr.\n";
  return out;
}

// One section of db/export/lookup_rule.hpp or tuned_lookup.hpp: the lines between
// "// BEGIN SECTION <name>" and "// END SECTION <name>", copied into the header as they are.
std::string_view lookup_section(std::string_view name) {
  const std::string begin = "// BEGIN SECTION " + std::string(name) + "\n";
  const std::string end = "// END SECTION " + std::string(name) + "\n";
  for (const auto& file : embedded::tuned_lookup) {
    const std::string_view text = file.text;
    const std::size_t first = text.find(begin);
    const std::size_t last = text.find(end);
    if (first != std::string_view::npos && last != std::string_view::npos && last > first)
      return text.substr(first + begin.size(), last - first - begin.size());
  }
  throw std::logic_error("db/export/lookup_rule.hpp and tuned_lookup.hpp have no section '" + std::string(name) + "'");
}

// The header comment's sentence on option dims, empty for a family without any.
std::string option_note(const ExportFamily& input) {
  if (input.option_dims.empty()) return "";
  return " Option dims (" + join_names(input.option_dims) +
         ") must match exactly: an entry tuned for another option is never used.";
}

std::string render_shape_helpers(const std::vector<std::string>& dim_names, const std::vector<std::string>& option_dims) {
  std::string equal, ratio, options;
  for (std::size_t i = 0; i < dim_names.size(); ++i) {
    const auto& d = dim_names[i];
    equal += (i > 0 ? " && " : "") + ("a." + d + " == b." + d);
    if (std::find(option_dims.begin(), option_dims.end(), d) != option_dims.end())
      options += (options.empty() ? "" : " && ") + ("a." + d + " == b." + d);
    else
      ratio += "\n         * extent_ratio(a." + d + ", b." + d + ")";
  }
  const std::string params = dim_names.empty() ? "const Shape&, const Shape&" : "const Shape& a, const Shape& b";
  std::string out;
  out += "constexpr bool same_shape(" + params + ") { return " + (dim_names.empty() ? "true" : equal) + "; }\n\n";
  if (!options.empty()) {
    out += "// Option dims (layouts, epilogues) must match: a config tuned for one may not be valid for another.\n";
    out += "constexpr bool same_options(" + params + ") { return " + options + "; }\n\n";
  } else {
    out += "constexpr bool same_options(const Shape&, const Shape&) { return true; }\n\n";
  }
  out += "// 2^(sum over dims of |log2(query / tuned)|): ranks shapes like the sum of logs does, without\n";
  out += "// std::log2 (not constexpr before C++26).\n";
  out += "constexpr double shape_distance(" + params + ") {\n  return 1.0" + ratio + ";\n}\n\n";
  return out;
}

std::string current_utc_time() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

// Writes `text` to `path` through a temporary file in the same directory and a rename, so a
// reader sees the old file or the new one, never a partial one (tuner/core/output_file.hpp).
void write_atomically(const std::filesystem::path& path, const std::string& text) {
  write_file_atomically(path, text, "export");
}

// For code that handles every family alike (ktune's kernel library): the config's parameters by
// name in the space's order, and a Shape built from a function that gives each dim by name.
std::string render_generic_access(const ExportFamily& input) {
  std::string out =
      "// For code that handles every family alike: visit(name, value) for each parameter of a Config\n"
      "// (in the space's order) or each dim of a Shape, and a Shape from dim(name), a function giving\n"
      "// each dim's value.\n"
      "template <class Visit>\n"
      "constexpr void for_each_parameter(const Config& config, Visit&& visit) {\n";
  for (const auto& name : input.param_names) out += "  visit(std::string_view(" + cpp_string(name) + "), config." + name + ");\n";
  out += "}\n\n"
         "template <class Visit>\n"
         "constexpr void for_each_dim(const Shape& shape, Visit&& visit) {\n";
  for (const auto& name : input.dim_names) out += "  visit(std::string_view(" + cpp_string(name) + "), shape." + name + ");\n";
  out += "}\n\n"
         "template <class DimValue>\n"
         "constexpr Shape make_shape(DimValue&& dim) {\n"
         "  return Shape{";
  for (std::size_t i = 0; i < input.dim_names.size(); ++i)
    out += (i ? ", ." : ".") + input.dim_names[i] + " = dim(std::string_view(" + cpp_string(input.dim_names[i]) + "))";
  out += "};\n}\n\n";
  return out;
}

}  // namespace

// The family's untuned starting points per kind of GPU, when it has any: a struct with a field
// per value name, `tuned` always false, and a lookup by target falling back to "fallback".
std::string render_architecture_defaults(const ExportFamily& input) {
  const auto& defaults = input.architecture_defaults;
  if (defaults.empty()) return "";
  for (const auto& d : defaults) {
    if (d.values.size() != defaults.front().values.size())
      throw InputError("export: the architecture defaults of " + input.family + " do not all name the same values");
    for (std::size_t i = 0; i < d.values.size(); ++i)
      if (d.values[i].first != defaults.front().values[i].first || !is_identifier(d.values[i].first))
        throw InputError("export: architecture default '" + d.target + "' of " + input.family +
                         " names value '" + d.values[i].first + "' where the others name '" +
                         defaults.front().values[i].first + "'");
  }
  std::string out =
      "// Untuned starting points for kinds of GPU ktune has not measured, from the family's\n"
      "// published practice. NOT measurements (tuned == false): tune on the device to replace them.\n"
      "struct ArchitectureDefault {\n"
      "  std::string_view target;     // \"ampere\", \"hopper\", \"rdna3\", \"apple\", \"fallback\"\n"
      "  std::string_view precision;\n";
  for (const auto& [name, value] : defaults.front().values) out += "  std::int64_t " + name + ";\n";
  out += "  bool tuned;\n};\n\n";
  out += "inline constexpr std::array<ArchitectureDefault, " + std::to_string(defaults.size()) +
         "> architecture_defaults{{\n";
  for (const auto& d : defaults) {
    out += "    {.target = " + cpp_string(d.target) + ", .precision = " + cpp_string(d.precision);
    for (const auto& [name, value] : d.values) out += ", ." + name + " = " + cpp_int(value);
    out += ", .tuned = false},\n";
  }
  out += "}};\n\n";
  out += lookup_section("architecture_default");
  return out;
}

std::string render_header(const ExportFamily& input, const std::string& generated_at) {
  const Prepared prepared = prepare(input);
  const std::string& family = input.family;
  std::ostringstream out;

  out << "// " << family << ".hpp: tuned configurations of the kernel family \"" << family << "\".\n"
      << "//\n"
      << "// GENERATED by `ktune export` (ktune " << build_info::version << "). DO NOT EDIT: changes are\n"
      << "// lost at the next export; tune again and re-export instead.\n"
      << "//\n"
      << "//   family:     " << family << "\n"
      << "//   database:   " << comment_text(cpp_string(input.database)) << "\n"
      << "//   generated:  " << comment_text(generated_at) << "\n"
      << "//   entries:    " << prepared.entries.size()
      << " (best median per backend, device, precision and shape";
  if (prepared.superseded > 0)
    out << "; " << prepared.superseded << " older duplicate(s) left out";
  out << ")\n"
      << "//\n"
      << "// Usage (self-contained, standard headers only; C++20 for its designated initializers, which\n"
      << "// GCC and Clang also accept in C++17 mode as an extension unless -Wpedantic):\n"
      << "//\n"
      << usage_example(input, prepared) << "//\n"
      << "// Fallback chain of lookup()/lookup_entry(): tuned entries of the same backend and device name\n"
      << "// -> else of the same backend and architecture -> else of the same backend and vendor -> else\n"
      << "// default_config (the search space's untuned default). Names are compared normalised: ASCII\n"
      << "// case folded, runs of whitespace collapsed, leading/trailing whitespace ignored; an empty\n"
      << "// query field matches nothing. Within the first level that has entries: entries of the\n"
      << "// requested precision are preferred when there are any, then the exact shape, else the\n"
      << "// nearest shape: the smallest sum over dims of |log2(query / tuned)| (extents below 1 count\n"
      << "// as 1; ties go to the entry listed first)." << option_note(input) << "\n"
      << "#pragma once\n\n"
      << "#include <array>\n#include <cstddef>\n#include <cstdint>\n#include <string_view>\n\n"
      << "namespace ktune::tuned::" << input.backend << "::" << family << " {\n\n"
      << "inline constexpr std::string_view family_name = " << cpp_string(family) << ";\n\n"
      << lookup_section("match_level");

  out << "// One configuration: a field per parameter of the search space, in its order.\n"
      << "struct Config {\n";
  for (std::size_t i = 0; i < input.param_names.size(); ++i)
    out << "  " << cpp_type(prepared.types[i]) << " " << input.param_names[i] << ";\n";
  out << "};\n\n"
      << "// A problem shape: a field per dimension of the family, in its order.\n"
      << "struct Shape {\n";
  for (const auto& dim : input.dim_names) out << "  std::int64_t " << dim << ";\n";
  out << "};\n\n"
      << render_generic_access(input)
      << lookup_section("tuned_entry")
      << "// The untuned default (the search space's \"default\"): the answer when no entry matches.\n"
      << "inline constexpr Config default_config"
      << config_initializer(input.default_config, input, prepared.types, "the default config") << ";\n\n";

  out << "// Tuned entries, sorted by backend, vendor, architecture, device, precision and shape.\n";
  if (prepared.entries.empty()) {
    out << "inline constexpr std::array<TunedEntry, 0> entries{};  // nothing tuned yet\n\n";
  } else {
    out << "inline constexpr std::array<TunedEntry, " << prepared.entries.size() << "> entries{{\n";
    for (const auto* entry : prepared.entries) out << render_entry(*entry, input, prepared.types);
    out << "}};\n\n";
  }
  out << lookup_section("resources") << render_architecture_defaults(input) << lookup_section("rule")
      << lookup_section("lookup_result") << "namespace detail {\n\n"
      << render_shape_helpers(input.dim_names, input.option_dims) << "}  // namespace detail\n\n"
      << lookup_section("lookup_functions")
      << "}  // namespace ktune::tuned::" << input.backend << "::" << family << "\n";
  return out.str();
}

nlohmann::json architecture_defaults_json(const ExportFamily& input) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : input.architecture_defaults) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [name, value] : d.values) values[name] = value;
    out.push_back({{"target", d.target}, {"precision", d.precision}, {"values", values}, {"tuned", false}});
  }
  return out;
}

nlohmann::json render_json(const ExportFamily& input, const std::string& generated_at) {
  const Prepared prepared = prepare(input);
  nlohmann::json params = nlohmann::json::array();
  for (std::size_t i = 0; i < input.param_names.size(); ++i)
    params.push_back({{"name", input.param_names[i]}, {"type", json_type(prepared.types[i])}});
  nlohmann::json entries = nlohmann::json::array();
  for (const auto* entry : prepared.entries) {
    nlohmann::json shape = nlohmann::json::object();
    for (const auto& dim : input.dim_names) shape[dim] = entry->problem.dim(dim);
    entries.push_back({
        {"measurement_id", entry->measurement_id},
        {"backend", entry->backend},
        {"device",
         {{"name", entry->device.name},
          {"architecture", entry->device.architecture},
          {"vendor", entry->device.vendor},
          {"fingerprint", entry->device.fingerprint}}},
        {"precision", std::string(to_string(entry->problem.precision))},
        {"shape", shape},
        {"config", entry->config.to_json()},
        {"shared_bytes", resources_of(*entry, input).shared_bytes},
        {"threads", resources_of(*entry, input).threads},
        {"stats", entry->stats.to_json()},
        {"error", entry->error < 0 ? nlohmann::json(nullptr) : nlohmann::json(entry->error)},
        {"source_hash", entry->source_hash},
        {"measured_at", entry->measured_at},
        {"ktune_version", entry->ktune_version},
        {"git_commit", entry->git_commit},
    });
  }
  return {
      {"family", input.family},
      {"backend", input.backend},
      {"generated_at", generated_at},
      {"generator", {{"ktune_version", build_info::version}}},
      {"database", input.database},
      {"dims", input.dim_names},
      {"params", params},
      {"default", input.default_config.to_json()},
      {"superseded_entries", prepared.superseded},
      {"entries", entries},
      {"architecture_defaults", architecture_defaults_json(input)},
  };
}

std::filesystem::path write_exports(const ExportFamily& input, const std::filesystem::path& out_dir) {
  const std::string generated_at = current_utc_time();
  // Render both before writing either, so bad input leaves the directory untouched.
  const std::string header = render_header(input, generated_at);
  const std::string json = render_json(input, generated_at).dump(2) + "\n";

  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) throw InputError("export: cannot create directory " + out_dir.string() + ": " + error.message());
  const std::filesystem::path header_path = out_dir / (input.family + ".hpp");
  write_atomically(out_dir / (input.family + ".json"), json);
  write_atomically(header_path, header);
  return header_path;
}

}  // namespace ktune
