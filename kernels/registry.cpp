// The families compiled into ktune: those of kernels/CMakeLists.txt (compiled_families(), generated
// from their descriptors by cmake/family.cmake), then a family defined at run time (a T1 spec).
#include <cstdlib>
#include <string>

#include "kernels/family.hpp"
#include "kernels/t1/t1_kernel.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

bool test_families_enabled() {
  const char* flag = std::getenv("KTUNE_ENABLE_TEST_FAMILIES");
  return flag != nullptr && std::string(flag) == "1";
}

}  // namespace

std::vector<const KernelFamily*> all_families() {
  std::vector<const KernelFamily*> families = compiled_families(test_families_enabled());
  if (const KernelFamily* t1 = registered_t1_kernel()) families.push_back(t1);  // ktune tune --t1
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
