#include "tuner/cli/cli_common.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <regex>

#include "tuner/core/errors.hpp"

namespace ktune::cli {

void add_common_options(CLI::App& command, CommonOptions& common) {
  command.add_flag("--json", common.json, "Print one machine-readable JSON document on stdout");
  command.add_option("--db", common.db, "Results database (SQLite)")->capture_default_str();
}

void add_json_option(CLI::App& command, CommonOptions& common) {
  command.add_flag("--json", common.json, "Print one machine-readable JSON document on stdout");
}

std::string closest_name(const std::string& word, const std::vector<std::string>& names) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& name : names) {
    const std::size_t d = distance(word, name);
    if (d < best_distance) best = name, best_distance = d;
  }
  // A typo (a swapped, missing or extra letter or two), not a different word.
  const std::size_t allowed = std::max<std::size_t>(2, word.size() / 3);
  return best_distance <= allowed && best_distance < word.size() ? best : "";
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
    } catch (const std::out_of_range&) {
      throw InputError("--shape: " + name + "=" + value + " is too large (at most " +
                       std::to_string(std::numeric_limits<std::int64_t>::max()) + ")");
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

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max, const std::string& expected,
                            const std::string& description) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        // Digits only: strtoull would take "-1" as 2^64-1 and " 5" or "5x" in part.
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        errno = 0;
        const unsigned long long value = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
        if (!digits || errno == ERANGE || value < min || value > max) return "'" + text + "' is not " + expected;
        return "";
      },
      description);
}

CLI::Validator real_number(double min, double max, bool min_exclusive, const std::string& expected,
                           const std::string& description) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool whole = !text.empty() && end == text.c_str() + text.size();
        if (!whole || !std::isfinite(value) || value > max || (min_exclusive ? value <= min : value < min))
          return "'" + text + "' is not " + expected;
        return "";
      },
      description);
}

CLI::Validator non_empty(const std::string& hint) {
  return CLI::Validator([=](std::string& text) -> std::string { return text.empty() ? "is empty; " + hint : ""; },
                        "");
}

void check_output_dir(const std::string& dir, const std::string& option, const std::string& alternative) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path path(dir);
  const auto status = fs::status(path, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      throw InputError(option + " '" + dir + "' is a file, not a directory; pass a directory, " + alternative);
    if (::access(path.c_str(), W_OK | X_OK) != 0)
      throw InputError(option + " '" + dir + "' is not writable (" + std::strerror(errno) + "); pass another directory, " +
                       alternative);
    return;
  }
  // The nearest part of the path that exists must be a directory ktune may write into.
  fs::path ancestor = path.parent_path();
  while (!ancestor.empty() && !fs::exists(fs::status(ancestor, error))) ancestor = ancestor.parent_path();
  if (ancestor.empty()) ancestor = path.is_absolute() ? path.root_path() : fs::path(".");
  if (!fs::is_directory(fs::status(ancestor, error)))
    throw InputError(option + " '" + dir + "' cannot be created: '" + ancestor.string() +
                     "' is a file, not a directory; pass another directory, " + alternative);
  if (::access(ancestor.c_str(), W_OK | X_OK) != 0)
    throw InputError(option + " '" + dir + "' cannot be created: '" + ancestor.string() + "' is not writable (" +
                     std::strerror(errno) + "); pass another directory, " + alternative);
}

void check_arch(const std::string& backend, const std::string& arch) {
  if (backend != "cuda" && backend != "hip" && backend != "vulkan")
    throw InputError("--arch " + arch + " names a GPU architecture, which the " + backend +
                     " backend does not have; pass --backend cuda, hip or vulkan, or leave out --arch");
  if (backend == "vulkan" && arch != "nvidia" && arch != "lavapipe")
    throw InputError("--arch: '" + arch + "' is not a Vulkan device kind ktune knows the limits of; give nvidia "
                     "(NVIDIA's driver, cooperative matrices) or lavapipe (Mesa's CPU driver)");
  if (backend == "cuda" && !std::regex_match(arch, std::regex("sm_[0-9]{2,3}[af]?")))
    throw InputError("--arch: '" + arch + "' is not a CUDA architecture; give one such as sm_80, sm_90a or sm_100a");
  if (backend == "hip" && !std::regex_match(arch, std::regex("gfx[0-9a-f]{3,4}")))
    throw InputError("--arch: '" + arch + "' is not an AMD GPU target; give one such as gfx90a, gfx940 or gfx1030");
}

std::vector<std::string> options_after_command(const std::vector<std::string>& argv) {
  std::vector<std::string> moved;
  std::size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word == "--json" || word.rfind("--db=", 0) == 0) moved.push_back(word);
    else if (word == "--db" && i + 1 < argv.size()) moved.insert(moved.end(), {word, argv[++i]});
    else break;
  }
  if (moved.empty() || i >= argv.size()) return argv;
  std::vector<std::string> result{argv[0], argv[i]};
  result.insert(result.end(), moved.begin(), moved.end());
  result.insert(result.end(), argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end());
  return result;
}

namespace {

// The first word after the command that is neither one of its options nor an option's value, in
// words: what it is, what was probably meant, and where to look. "" when none is found.
std::string unknown_option(const CLI::App& command, const std::vector<std::string>& argv) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  const std::string help = ". Run `ktune " + command.get_name() + " --help` for its options";
  bool after_command = false;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (!after_command) {
      after_command = word == command.get_name();
      continue;
    }
    if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;
    const std::string name = word.substr(0, word.find('='));
    if (command.get_option_no_throw(name)) continue;
    if (name == "--db")
      return "ktune " + command.get_name() + " reads no results database, so it takes no --db" + help;
    if (name == "--json")
      return "ktune " + command.get_name() + " has no JSON output, so it takes no --json" + help;
    const std::string meant = closest_name(name, names);
    return "unknown option " + name + " of ktune " + command.get_name() +
           (meant.empty() ? "" : " (did you mean " + meant + "?)") + help;
  }
  return "";
}

}  // namespace

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); }))
    names.push_back(command->get_name());
  return names;
}

std::string unknown_command(const CLI::App& app, const std::string& word) {
  const std::vector<std::string> commands = command_names(app);
  const std::string meant = closest_name(word, commands);
  return "unknown command '" + word + "'" + (meant.empty() ? "" : " (did you mean '" + meant + "'?)") +
         "; valid commands: " + join_names(commands) + ". Run `ktune --help` for what each does";
}

std::string describe_usage_error(const CLI::App& app, const CLI::ParseError& error,
                                 const std::vector<std::string>& argv) {
  const std::vector<std::string> commands = command_names(app);
  const auto parsed = app.get_subcommands();
  if (parsed.empty()) {
    // No command was recognised: say which word was taken for one, and list them.
    std::string word;
    for (std::size_t i = 1; i < argv.size() && word.empty(); ++i)
      if (!argv[i].empty() && argv[i][0] != '-') word = argv[i];
    const std::string valid = "; valid commands: " + join_names(commands) + ". Run `ktune --help` for what each does";
    if (!word.empty()) return unknown_command(app, word);
    if (dynamic_cast<const CLI::RequiredError*>(&error)) return "no command given" + valid;
    return std::string(error.what()) + valid;
  }
  std::string what = error.what();
  // "--budget: 1 required UINT:N>=1 missing" -> "--budget needs a value"
  const std::string missing = " missing";
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) && what.size() > missing.size() &&
      what.compare(what.size() - missing.size(), missing.size(), missing) == 0 && what.find(": ") != std::string::npos)
    what = what.substr(0, what.find(": ")) + " needs a value";
  const CLI::App* command = parsed.front();
  if (dynamic_cast<const CLI::ExtrasError*>(&error)) {
    if (std::string unknown = unknown_option(*command, argv); !unknown.empty()) return unknown;
  }
  // "new is required" -> "NEW.json (Google Benchmark JSON to check against it) is missing"
  const std::string required = " is required";
  if (dynamic_cast<const CLI::RequiredError*>(&error) && what.size() > required.size() &&
      what.compare(what.size() - required.size(), required.size(), required) == 0) {
    const CLI::Option* option = command->get_option_no_throw(what.substr(0, what.size() - required.size()));
    if (option && option->get_positional())
      what = option->get_type_name() + " (" + option->get_description() + ") is missing; usage: ktune " +
             command->get_name() + " " + [&] {
               std::vector<std::string> names;
               for (const CLI::Option* positional :
                    command->get_options([](const CLI::Option* o) { return o->get_positional(); }))
                 names.push_back(positional->get_type_name());
               return join_names(names, " ");
             }();
  }
  return what + ". Run `ktune " + command->get_name() + " --help` for its options";
}

std::string no_device_hint(const std::string& command, const std::vector<std::string>& argv) {
  auto given = [&](const std::string& option) {
    return std::any_of(argv.begin(), argv.end(), [&](const std::string& word) {
      return word == option || word.rfind(option + "=", 0) == 0;
    });
  };
  if (command == "tune" && given("--t1"))
    return "A T1 spec's kernel runs on a GPU: tune it on a machine with one, or check that every config compiles "
           "here with --compile-only --arch sm_90a (or --backend hip --arch gfx90a).";
  if (command == "tune")
    return "Pass --backend cpu to tune here, or --compile-only --arch sm_90a to check the GPU variants compile.";
  if (command == "space") return "Pass --arch (e.g. sm_90a) to size the space for a nominal device without a GPU.";
  if (command == "bench") return "Pass --backend cpu to benchmark here.";
  return "";
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
