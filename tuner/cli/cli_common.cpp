#include "tuner/cli/cli_common.hpp"

#include <cstdio>
#include <iostream>

#include "tuner/core/errors.hpp"

namespace ktune::cli {

void add_common_options(CLI::App& command, CommonOptions& common) {
  command.add_flag("--json", common.json, "Print one machine-readable JSON document on stdout");
  command.add_option("--db", common.db, "Results database (SQLite)")->capture_default_str();
}

std::map<std::string, std::int64_t> parse_shape(const std::string& text) {
  std::map<std::string, std::int64_t> shape;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string part = text.substr(begin, end - begin);
    const auto equals = part.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == part.size())
      throw InputError("--shape: expected dim=value pairs separated by commas (e.g. rows=256,cols=1024), got '" +
                       part + "' in '" + text + "'");
    const std::string name = part.substr(0, equals);
    const std::string value = part.substr(equals + 1);
    std::size_t used = 0;
    std::int64_t number = 0;
    try {
      number = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size()) throw InputError("--shape: " + name + "=" + value + " is not an integer");
    if (shape.count(name)) throw InputError("--shape: " + name + " is given twice in '" + text + "'");
    shape[name] = number;
    begin = end + 1;
  }
  return shape;
}

std::string format_duration_ns(double ns) {
  char text[32];
  if (ns < 1e3) std::snprintf(text, sizeof text, "%.0f ns", ns);
  else if (ns < 1e6) std::snprintf(text, sizeof text, "%.2f us", ns / 1e3);
  else if (ns < 1e9) std::snprintf(text, sizeof text, "%.3f ms", ns / 1e6);
  else std::snprintf(text, sizeof text, "%.3f s", ns / 1e9);
  return text;
}

std::string format_rate(double per_second, const std::string& unit) {
  char text[32];
  if (per_second >= 1e12) std::snprintf(text, sizeof text, "%.2f T%s/s", per_second / 1e12, unit.c_str());
  else if (per_second >= 1e9) std::snprintf(text, sizeof text, "%.1f G%s/s", per_second / 1e9, unit.c_str());
  else std::snprintf(text, sizeof text, "%.1f M%s/s", per_second / 1e6, unit.c_str());
  return text;
}

void print_json(const nlohmann::json& value) { std::cout << value.dump(2) << std::endl; }

}  // namespace ktune::cli
