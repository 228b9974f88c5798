#include "tuner/bench/shape_suite.hpp"

#include <algorithm>
#include <iterator>
#include <map>

#include <nlohmann/json.hpp>

#include "kernels/family.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/input_file.hpp"
#include "tuner/core/json_file.hpp"
#include "tuner/tune/space_files.hpp"

namespace ktune {

std::filesystem::path default_suite_file(const std::string& name) {
  // Suites sit next to the search spaces, so $KTUNE_SEARCH_SPACES moves both.
  return search_space_dir() / "suites" / (name + ".json");
}

ShapeSuite parse_shape_suite(const std::string& text, const std::filesystem::path& file) {
  const std::string where = file.string();
  // Ordered, so that the entries (and the bench's benchmarks) follow the file, as documented.
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(where + ": not valid JSON: " + parse_error_text(e));
  }
  auto fail = [&](const std::string& what) -> InputError { return InputError(where + ": " + what); };
  if (!json.is_object()) throw fail("a shape suite must be a JSON object with \"suite\", \"precisions\" and \"shapes\"");
  ShapeSuite suite;
  suite.file = file;
  if (!json.contains("suite") || !json["suite"].is_string() || json["suite"].get<std::string>().empty())
    throw fail("\"suite\" must be the suite's name (a non-empty string)");
  suite.name = json["suite"].get<std::string>();
  suite.description = json.value("description", "");
  if (!json.contains("precisions") || !json["precisions"].is_array() || json["precisions"].empty())
    throw fail("\"precisions\" must be a non-empty array such as [\"bf16\"]");
  std::vector<Precision> precisions;
  for (const auto& p : json["precisions"]) {
    const auto parsed = p.is_string() ? parse_precision(p.get<std::string>()) : std::nullopt;
    if (!parsed)
      throw fail("\"precisions\": " + p.dump() + " is not one of " + join_names(all_precision_names()));
    if (std::find(precisions.begin(), precisions.end(), *parsed) != precisions.end())
      throw fail("\"precisions\": " + p.dump() + " is listed twice");
    precisions.push_back(*parsed);
  }
  if (!json.contains("shapes") || !json["shapes"].is_object() || json["shapes"].empty())
    throw fail("\"shapes\" must be a non-empty object mapping kernel families to arrays of shapes");
  std::map<std::string, std::string> entry_of_problem;  // family;problem key -> the entry that gave it first
  for (const auto& [family_name, shapes] : json["shapes"].items()) {
    const KernelFamily* family = nullptr;
    try {
      family = &find_family(family_name);
    } catch (const InputError& e) {
      throw fail("\"shapes\": " + std::string(e.what()));
    }
    if (!shapes.is_array() || shapes.empty())
      throw fail("\"shapes\".\"" + family_name + "\" must be a non-empty array of {dim: value} objects");
    // A precision the family lacks is skipped for it; lacking all of them, its shapes would vanish.
    const auto supported = family->precisions();
    if (std::none_of(precisions.begin(), precisions.end(), [&](Precision p) {
          return std::find(supported.begin(), supported.end(), p) != supported.end();
        })) {
      std::vector<std::string> names;
      for (const Precision p : supported) names.emplace_back(to_string(p));
      throw fail("\"shapes\".\"" + family_name + "\": " + family_name +
                 " supports none of the suite's \"precisions\"; it supports " + join_names(names));
    }
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const std::string entry = "\"shapes\".\"" + family_name + "\"[" + std::to_string(i) + "]";
      if (!shapes[i].is_object()) throw fail(entry + " must be an object such as {\"rows\": 4096, \"cols\": 4096}");
      std::map<std::string, std::int64_t> dims;
      for (const auto& [dim, value] : shapes[i].items()) {
        if (!value.is_number_integer()) throw fail(entry + "." + dim + " must be a whole number, got " + value.dump());
        dims[dim] = value.get<std::int64_t>();
      }
      for (const Precision precision : precisions) {
        if (std::find(supported.begin(), supported.end(), precision) == supported.end()) continue;
        Problem problem;
        try {
          problem = family->make_problem(dims, precision);
        } catch (const InputError& e) {
          // make_problem words its messages for the command line ("--shape: ..."); here the
          // entry of the file is what is at fault.
          std::string message = e.what();
          if (message.starts_with("--shape: ")) message.erase(0, 9);
          throw fail(entry + ": " + message);
        }
        // Twice the same problem would be timed twice under one benchmark name.
        const std::string key = family_name + ";" + problem.key();
        const auto [first, inserted] = entry_of_problem.emplace(key, entry);
        if (!inserted)
          throw fail(entry + " is the same problem as " + first->second + " (" + problem.describe() +
                     "); list each shape once");
        suite.entries.push_back({family_name, std::move(problem)});
      }
    }
  }
  return suite;
}

ShapeSuite load_shape_suite(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json");
  const std::filesystem::path file = is_path ? std::filesystem::path(name_or_path) : default_suite_file(name_or_path);
  if (!is_path && !std::filesystem::exists(file)) {
    std::vector<std::string> names;
    if (std::filesystem::is_directory(file.parent_path()))
      for (const auto& entry : std::filesystem::directory_iterator(file.parent_path()))
        if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
    std::sort(names.begin(), names.end());
    throw InputError("--suite: no suite named '" + name_or_path + "' (looked for " + file.string() +
                     "); valid suites: " + (names.empty() ? std::string("none") : join_names(names)) +
                     ", or give the path of a suite file");
  }
  open_json_file(file, "a shape suite", "pass a suite name or the path of a suite file");  // errors that name it
  const std::string text = read_file_bytes(file, std::size_t{64} << 20);
  return parse_shape_suite(text, file);
}

}  // namespace ktune
