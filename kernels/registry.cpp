// The families compiled into ktune: those of kernels/CMakeLists.txt (compiled_families(), generated
// from their descriptors by cmake/family.cmake), then a family defined at run time (a T1 spec).
#include <cstdlib>
#include <mutex>
#include <string>

#include "kernels/family.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

bool test_families_enabled() {
  const char* flag = std::getenv("KTUNE_ENABLE_TEST_FAMILIES");
  return flag != nullptr && std::string(flag) == "1";
}

// Families defined at run time (register_runtime_family), in the order registered.
std::mutex g_runtime_families_mutex;
std::vector<const KernelFamily*> g_runtime_families;

}  // namespace

void register_runtime_family(const KernelFamily* family) {
  std::lock_guard lock(g_runtime_families_mutex);
  g_runtime_families.push_back(family);
}

void unregister_runtime_family(const KernelFamily* family) {
  std::lock_guard lock(g_runtime_families_mutex);
  std::erase(g_runtime_families, family);
}

std::vector<const KernelFamily*> all_families() {
  std::vector<const KernelFamily*> families = compiled_families(test_families_enabled());
  std::lock_guard lock(g_runtime_families_mutex);
  families.insert(families.end(), g_runtime_families.begin(), g_runtime_families.end());
  return families;
}

const KernelFamily& find_family(std::string_view name) {
  std::vector<std::string> names;
  for (const KernelFamily* family : all_families()) {
    if (family->name() == name) return *family;
    names.push_back(family->name());
  }
  throw InputError("unknown kernel '" + std::string(name) + "'; valid kernels: " + join_names(names));
}

std::vector<std::string> default_family_names() { return {"rmsnorm", "swiglu"}; }

}  // namespace ktune
