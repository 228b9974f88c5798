#include "library/src/library_spaces.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "ktune/embedded/library_spaces.hpp"
#include "ktune/kernels.hpp"

namespace ktune::library {

const SearchSpace& library_space(const std::string& family, const std::string& backend) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<SearchSpace>> parsed;
  const std::string path = "search_spaces/" + family + "." + backend + ".json";
  std::lock_guard lock(mutex);
  if (auto found = parsed.find(path); found != parsed.end()) return *found->second;
  for (const auto& file : embedded::library_spaces) {
    if (file.path != path) continue;
    auto space = std::make_unique<SearchSpace>(SearchSpace::from_json(nlohmann::json::parse(file.text), path));
    return *parsed.emplace(path, std::move(space)).first->second;
  }
  throw kernels::Error(kernels::ErrorCode::unsupported,
                       family + " does not run on the " + backend + " backend (this library has no " + path + ")");
}

}  // namespace ktune::library
