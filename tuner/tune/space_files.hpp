// Where search-space files are found, for tune, bench, export and the space command.
#pragma once

#include <filesystem>
#include <string>

namespace ktune {

// Where search-space files (and suites/) are found: $KTUNE_SEARCH_SPACES, else the source
// tree's search_spaces/ (compiled in).
std::filesystem::path search_space_dir();
std::filesystem::path default_space_file(const std::string& family, const std::string& backend);

}  // namespace ktune
