// Builds GPU variants ahead of the device: a pool of compiler threads works on the configs the
// strategy will propose next while the worker measures the current one, so the GPU rarely
// waits for the compiler. Backends whose variants are compiled into ktune (the CPU) have none.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/backends/backend.hpp"
#include "tuner/core/config.hpp"

namespace ktune {

struct BuiltVariant {
  bool ok = false;
  VariantBuild build;  // binary, entry, compile time (launch is filled in by the tuner)
  std::string log;     // the compiler's message when !ok
};

class VariantBuilder {
 public:
  virtual ~VariantBuilder() = default;
  // Queues a build (returns at once); `id` names it for get().
  virtual void prefetch(std::size_t id, const Config& config) = 0;
  // The build of `config`, waiting for it if queued; builds it now if it was never queued.
  virtual BuiltVariant get(std::size_t id, const Config& config) = 0;
  // Whether get(id) would return at once (its build has finished); false for one never queued.
  virtual bool ready(std::size_t id) const {
    (void)id;
    return true;
  }
  virtual std::string arch() const = 0;
};

// How hard the compiler optimizes. `fast_check` asks the compiler to trade code quality for
// compile time (every stage still runs, so a variant that fails to build still fails): for
// checking that variants compile, never for variants that are measured.
enum class BuildEffort { full, fast_check };

// nullptr for backends that need no build step. `arch` empty: the device's own. Configs that
// differ only in the parameters named in `launch_only` (SearchSpace::launch_only_names) share
// one build.
std::unique_ptr<VariantBuilder> make_variant_builder(const std::string& backend, const KernelFamily& family,
                                                     const Problem& problem, const std::string& arch,
                                                     int threads, BuildEffort effort = BuildEffort::full,
                                                     const std::vector<std::string>& launch_only = {});

}  // namespace ktune
