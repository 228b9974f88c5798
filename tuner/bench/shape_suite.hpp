// A shape suite: the problems `ktune bench` runs, per kernel family, from
// search_spaces/suites/<name>.json (or any file given by path):
//
//   {"suite": "transformer", "description": "...", "precisions": ["bf16"],
//    "shapes": {"rmsnorm": [{"rows": 4096, "cols": 4096}, ...], "swiglu": [...]}}
//
// Every family's dims are checked when the suite is loaded, so a typo fails before any device
// time is spent; InputError names the file and the entry.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tuner/core/problem.hpp"

namespace ktune {

struct SuiteEntry {
  std::string family;
  Problem problem;
};

struct ShapeSuite {
  std::string name;
  std::string description;
  std::filesystem::path file;
  std::vector<SuiteEntry> entries;  // in file order: family, then shape, then precision
};

// Where a suite named `name` lives: $KTUNE_SEARCH_SPACES/suites, else the source tree's.
std::filesystem::path default_suite_file(const std::string& name);
// `name_or_path`: a suite name ("transformer") or a path to a suite file (has a '/' or ends in .json).
ShapeSuite load_shape_suite(const std::string& name_or_path);
ShapeSuite parse_shape_suite(const std::string& text, const std::filesystem::path& file);

}  // namespace ktune
