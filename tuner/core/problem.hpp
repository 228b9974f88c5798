// A problem: the family, its named dimensions (in the family's declared order) and precision.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/precision.hpp"

namespace ktune {

struct Problem {
  std::string family;
  std::vector<std::pair<std::string, std::int64_t>> dims;
  Precision precision = Precision::fp32;

  std::int64_t dim(std::string_view name) const;  // throws InputError listing the dims
  // Canonical text used as the database key, e.g. "rows=256,cols=1024;fp32".
  std::string key() const;
  // "rows=256 cols=1024 fp32" for humans.
  std::string describe() const;
  nlohmann::json to_json() const;  // {"family", "dims": {...}, "precision"}
};

}  // namespace ktune
