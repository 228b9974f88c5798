#include "library/src/run_time_images.hpp"

#include <cstdlib>
#include <string_view>

#include "library/src/executor.hpp"
#include "tuner/core/errors.hpp"

namespace ktune::library {

bool run_time_compiles_allowed() {
  const char* setting = std::getenv("KTUNE_LIBRARY_COMPILE");
  return !(setting && std::string_view(setting) == "0");
}

const RuntimeCompiler& RunTimeImages::compiler() {
  if (!compiler_ && !no_compiler_) {
    try {
      compiler_ = make_compiler_();
    } catch (const std::exception& e) {
      no_compiler_ = e.what();
    }
  }
  if (!compiler_) throw ConfigCannotRun("it cannot be compiled here: " + *no_compiler_);
  return *compiler_;
}

const GpuImage& RunTimeImages::image(const KernelFamily& family, const Problem& problem, const Config& config,
                                     const std::string& key) {
  if (!run_time_compiles_allowed())
    throw ConfigCannotRun("compiling it at run time is off (KTUNE_LIBRARY_COMPILE=0)");
  std::lock_guard lock(mutex_);
  if (const auto found = compiled_.find(key); found != compiled_.end()) return found->second->image;
  if (const auto failed = failed_.find(key); failed != failed_.end()) throw ConfigCannotRun(failed->second);
  const RuntimeCompiler& rtc = compiler();
  std::string why;
  try {
    const CompiledVariant compiled = rtc.compile(family, problem, config);
    if (compiled.ok) {
      auto owned = std::make_unique<Owned>();
      owned->key = key;
      owned->arch = rtc.arch();
      owned->entry = compiled.entry;
      owned->config = config.to_json().dump();
      owned->bytes = read_compiled_variant(compiled.binary_path.string());
      // PTX is text the driver reads up to its terminating null.
      if (owned->bytes.empty() || owned->bytes.back() != '\0') owned->bytes.push_back('\0');
      owned->image = {owned->key, owned->arch, owned->entry, owned->config,
                      reinterpret_cast<const unsigned char*>(owned->bytes.data()), owned->bytes.size()};
      return compiled_.emplace(key, std::move(owned)).first->second->image;
    }
    why = "it does not compile for " + rtc.arch() + ": " + compiled.log.substr(0, 400);
  } catch (const std::exception& e) {
    why = "it does not compile for " + rtc.arch() + ": " + e.what();
  }
  failed_.emplace(key, why);
  throw ConfigCannotRun(why);
}

}  // namespace ktune::library
