// The families' descriptors (kernels/<folder>/family.json, described in kernels/README.md), read
// by the tests for the shapes they check each family at, so no test keeps a list of families or
// of their shapes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ktune::testing {

using Shape = std::map<std::string, std::int64_t>;

struct FamilyDescriptor {
  std::string name;
  nlohmann::json json;

  bool test_only() const { return json.value("test_only", false); }
  // Whether sources.<backend> names any file ("cpu", "cuda", "vulkan").
  bool has_sources(const std::string& backend) const {
    const auto sources = json.find("sources");
    return sources != json.end() && sources->contains(backend) && !sources->at(backend).empty();
  }
  // shapes.<role>: a list ("odd", "launch", "recorded") or one shape ("bench"); empty when absent.
  std::vector<Shape> shapes(const std::string& role) const {
    const auto shapes = json.find("shapes");
    if (shapes == json.end() || !shapes->contains(role)) return {};
    const nlohmann::json& value = shapes->at(role);
    if (value.is_object()) return {value.get<Shape>()};
    return value.get<std::vector<Shape>>();
  }
  // shapes.<role> of a list of precision names ("launch_precisions"), or `fallback`.
  std::vector<std::string> names(const std::string& role, std::vector<std::string> fallback) const {
    const auto shapes = json.find("shapes");
    if (shapes == json.end() || !shapes->contains(role)) return fallback;
    return shapes->at(role).get<std::vector<std::string>>();
  }
};

// Every descriptor under KTUNE_SOURCE_DIR/kernels, in name order.
inline std::vector<FamilyDescriptor> family_descriptors() {
  std::map<std::string, FamilyDescriptor> by_name;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(KTUNE_SOURCE_DIR) / "kernels")) {
    const std::filesystem::path file = entry.path() / "family.json";
    if (!std::filesystem::is_regular_file(file)) continue;
    std::ifstream in(file);
    FamilyDescriptor descriptor{.name = {}, .json = nlohmann::json::parse(in)};
    descriptor.name = descriptor.json.at("family").get<std::string>();
    by_name.emplace(descriptor.name, std::move(descriptor));
  }
  std::vector<FamilyDescriptor> all;
  for (auto& [name, descriptor] : by_name) all.push_back(std::move(descriptor));
  return all;
}

inline FamilyDescriptor family_descriptor(const std::string& name) {
  for (FamilyDescriptor& descriptor : family_descriptors())
    if (descriptor.name == name) return descriptor;
  throw std::invalid_argument("no kernels/*/family.json declares the family " + name);
}

// The names of the families whose descriptor names sources for `backend`, test-only ones left out.
inline std::vector<std::string> families_with_sources(const std::string& backend) {
  std::vector<std::string> names;
  for (const FamilyDescriptor& descriptor : family_descriptors())
    if (!descriptor.test_only() && descriptor.has_sources(backend)) names.push_back(descriptor.name);
  return names;
}

}  // namespace ktune::testing
