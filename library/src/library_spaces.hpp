// The search spaces the library's calls validate configs against and take launch geometry and
// defaults from: search_spaces/<family>.<backend>.json, embedded at build time so the installed
// library needs no source tree.
#pragma once

#include <string>

#include "tuner/core/search_space.hpp"

namespace ktune::library {

// Error(unsupported) when the family has no space for the backend.
const SearchSpace& library_space(const std::string& family, const std::string& backend);

}  // namespace ktune::library
