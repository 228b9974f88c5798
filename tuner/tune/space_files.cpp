#include "tuner/tune/space_files.hpp"

#include <cstdlib>

#ifndef KTUNE_DEFAULT_SEARCH_SPACE_DIR
#error "KTUNE_DEFAULT_SEARCH_SPACE_DIR must be defined by the build"
#endif

namespace ktune {

std::filesystem::path search_space_dir() {
  const char* dir = std::getenv("KTUNE_SEARCH_SPACES");
  return dir && *dir ? dir : KTUNE_DEFAULT_SEARCH_SPACE_DIR;
}

std::filesystem::path default_space_file(const std::string& family, const std::string& backend) {
  return search_space_dir() / (family + "." + backend + ".json");
}

}  // namespace ktune
