// The families compiled into ktune. Adding a family: a folder kernels/<name>/ with its problem,
// reference and backend sources, a search space per backend in search_spaces/, and a line here.
#include <cstdlib>
#include <mutex>
#include <string>

#include "kernels/copy/copy.hpp"
#include "kernels/family.hpp"
#include "kernels/flash_attention/flash_attention.hpp"
#include "kernels/geglu/geglu.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/layernorm/layernorm.hpp"
#include "kernels/residual_layernorm/residual_layernorm.hpp"
#include "kernels/rmsnorm/rmsnorm.hpp"
#include "kernels/rmsnorm_rope/rmsnorm_rope.hpp"
#include "kernels/softmax/softmax.hpp"
#include "kernels/softmax_dropout/softmax_dropout.hpp"
#include "kernels/swiglu/swiglu.hpp"
#include "kernels/testing/fault_injection.hpp"
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
  std::vector<const KernelFamily*> families{&rmsnorm_family(), &layernorm_family(), &residual_layernorm_family(), &softmax_family(), &softmax_dropout_family(), &swiglu_family(), &geglu_family(), &rmsnorm_rope_family(), &copy_family(), &gemm_family(), &flash_attention_family()};
  if (test_families_enabled()) families.push_back(&fault_injection_family());
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
