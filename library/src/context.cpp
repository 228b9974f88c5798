// ktune::kernels::Context: picks a backend, holds its executor, and remembers the config chosen
// for each family, shape and precision so that repeated calls pay for the choice once.
#include <map>
#include <memory>
#include <set>
#include <mutex>

#include "ktune/kernels.hpp"
#include "library/src/call_arguments.hpp"
#include "library/src/composition.hpp"
#include "library/src/config_choice.hpp"
#include "library/src/executors.hpp"
#include "library/src/guarded.hpp"
#include "tuner/core/errors.hpp"

namespace ktune::kernels {
namespace {

using library::Executor;

Error no_device(Backend backend, const std::string& why) {
  return Error(ErrorCode::no_device, "no " + std::string(to_string(backend)) + " device: " + why);
}

}  // namespace

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
    case Backend::hip: return "hip";
    case Backend::vulkan: return "vulkan";
  }
  return "cpu";
}

std::string_view to_string(Precision precision) { return ktune::to_string(library::internal_precision(precision)); }

struct Context::Impl {
  Backend backend;
  std::unique_ptr<Executor> executor;
  std::mutex mutex;  // the choices and allocations below; a context may be shared by threads
  // Shared, so that a launch in flight keeps its config while use_config() replaces the entry.
  std::map<std::string, std::shared_ptr<library::ChosenConfig>> chosen;
  // What allocate() handed out and release() has not taken back: freed with the context.
  std::set<void*> allocations;
  // Calls of composed families (attention_block) made ready, per problem and stream: two streams
  // running the same call at once must not share its intermediates.
  std::map<std::pair<std::string, void*>, std::shared_ptr<library::ComposedCall>> composed;
  std::map<std::string, std::shared_ptr<library::ComposedCall>> composed_first;  // per problem, its first

  static std::string key_of(const Problem& problem) { return problem.family + ";" + problem.key(); }

  ~Impl() {
    if (!executor) return;
    for (void* memory : allocations) {
      try {
        executor->release(memory);
      } catch (const std::exception&) {
        // A backend that fails to free at exit leaves the rest to the driver.
      }
    }
  }

  std::shared_ptr<library::ChosenConfig> choice(const KernelFamily& family, const Problem& problem) {
    const std::string key = key_of(problem);
    std::lock_guard lock(mutex);
    if (auto found = chosen.find(key); found != chosen.end()) return found->second;
    require_runs(family);
    auto made = std::make_shared<library::ChosenConfig>(library::choose_config(*executor, family, problem));
    chosen.emplace(key, made);
    return made;
  }

  std::shared_ptr<library::ChosenConfig> give(const KernelFamily& family, const Problem& problem,
                                              std::string_view config) {
    require_runs(family);
    auto given = std::make_shared<library::ChosenConfig>(library::given_config(*executor, family, problem, config));
    std::lock_guard lock(mutex);
    chosen.insert_or_assign(key_of(problem), given);
    return given;
  }

  library::ComposedCall::Choose stage_choice() {
    return [this](const KernelFamily& stage, const Problem& stage_problem) { return choice(stage, stage_problem); };
  }

  // The call of a composed family made ready on `stream`: its intermediates are allocated at its
  // first call there. A stream being captured into a graph may not allocate, so a captured call
  // takes the intermediates of the problem's first call (a warm-up before the capture).
  std::shared_ptr<library::ComposedCall> composed_call(const KernelFamily& family, const Problem& problem,
                                                       Precision precision, void* stream) {
    const auto key = std::make_pair(key_of(problem), stream);
    {
      std::lock_guard lock(mutex);
      if (auto found = composed.find(key); found != composed.end()) return found->second;
      if (executor->capturing(stream)) {
        if (auto first = composed_first.find(key.first); first != composed_first.end()) return first->second;
        throw Error(ErrorCode::unsupported,
                    family.name() + " allocates its intermediates at its first call on a stream, which a graph "
                                    "capture forbids: call it once on this device before capturing (a warm-up)");
      }
    }
    auto made = std::make_shared<library::ComposedCall>(*executor, family, problem, precision);
    made->allocate(*executor, [this](std::size_t bytes) {
      void* memory = executor->allocate(bytes);
      std::lock_guard lock(mutex);
      allocations.insert(memory);
      return memory;
    });
    std::lock_guard lock(mutex);
    composed_first.emplace(key.first, made);
    return composed.emplace(key, std::move(made)).first->second;
  }

  void require_runs(const KernelFamily& family) const {
    if (!executor->runs(family))
      throw Error(ErrorCode::unsupported, family.name() + " has no " + std::string(to_string(backend)) +
                                              " implementation in this library");
  }
};

Context::Context() : impl_(std::make_unique<Impl>()) {
  std::string tried;
  for (const auto& factory : library::executor_factories()) {
    if (factory.chosen_by_default && !factory.chosen_by_default()) {
      tried += std::string(tried.empty() ? "" : "; ") + std::string(to_string(factory.backend)) +
               ": not chosen by default on this machine";
      continue;
    }
    try {
      impl_->executor = factory.make(0);
      impl_->backend = factory.backend;
      return;
    } catch (const std::exception& e) {
      tried += std::string(tried.empty() ? "" : "; ") + std::string(to_string(factory.backend)) + ": " + e.what();
    }
  }
  throw Error(ErrorCode::no_device, "no backend has a device (" + tried + ")");
}

Context::Context(Backend backend, int device) : impl_(std::make_unique<Impl>()) {
  for (const auto& factory : library::executor_factories()) {
    if (factory.backend != backend) continue;
    try {
      impl_->executor = factory.make(device);
    } catch (const std::exception& e) {
      throw no_device(backend, e.what());
    }
    impl_->backend = backend;
    return;
  }
  throw no_device(backend, "this build of ktune::kernels has no " + std::string(to_string(backend)) + " backend");
}

Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

std::vector<Backend> Context::available() {
  std::vector<Backend> backends;
  for (const auto& factory : library::executor_factories()) {
    try {
      factory.make(0);
      backends.push_back(factory.backend);
    } catch (const std::exception&) {
    }
  }
  return backends;
}

Backend Context::backend() const { return impl_->backend; }
std::string Context::device_name() const { return impl_->executor->device().name; }
std::string Context::architecture() const { return impl_->executor->device().architecture; }

void* Context::allocate(std::size_t bytes) {
  return library::guarded([&] {
    void* memory = impl_->executor->allocate(bytes);
    std::lock_guard lock(impl_->mutex);
    impl_->allocations.insert(memory);
    return memory;
  });
}
void Context::release(void* memory) {
  if (!memory) return;
  library::guarded([&] {
    {
      std::lock_guard lock(impl_->mutex);
      if (!impl_->allocations.erase(memory))
        throw Error(ErrorCode::bad_argument, "release: the pointer was not allocated by this context, or was released");
    }
    impl_->executor->release(memory);
  });
}
void Context::copy_to_device(void* device, const void* host, std::size_t bytes) {
  if (!device || !host) throw Error(ErrorCode::bad_argument, std::string(device ? "host" : "device") + " is null");
  library::guarded([&] { impl_->executor->copy_to_device(device, host, bytes); });
}
void Context::copy_to_host(void* host, const void* device, std::size_t bytes) {
  if (!device || !host) throw Error(ErrorCode::bad_argument, std::string(device ? "host" : "device") + " is null");
  library::guarded([&] { impl_->executor->copy_to_host(host, device, bytes); });
}
void Context::synchronize() {
  library::guarded([&] { impl_->executor->synchronize(); });
}

std::size_t Context::tensor_bytes(std::string_view family, std::string_view tensor,
                                  std::initializer_list<DimArgument> dims, Precision precision) const {
  return tensor_bytes(family, tensor, std::vector<DimArgument>(dims), precision);
}

std::size_t Context::tensor_bytes(std::string_view family_name, std::string_view tensor,
                                  const std::vector<DimArgument>& dims, Precision precision) const {
  return library::guarded([&] { return library::tensor_bytes(family_name, tensor, dims, precision); });
}

}  // namespace ktune::kernels

namespace ktune::library {

std::size_t tensor_bytes(std::string_view family_name, std::string_view tensor,
                         const std::vector<kernels::DimArgument>& dims, kernels::Precision precision) {
  using kernels::Error;
  using kernels::ErrorCode;
  const KernelFamily& family = library::family_named(family_name);
  const Problem problem = library::problem_of(family, dims, precision);
  std::vector<std::string> names;
  for (const TensorSpec& spec : family.tensors(problem)) {
    if (spec.name == tensor) return static_cast<std::size_t>(spec.bytes(problem));
    names.push_back(spec.name);
  }
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  throw Error(ErrorCode::bad_argument,
              "tensor '" + std::string(tensor) + "' is not a tensor of " + family.name() + "; its tensors are: " + list);
}

}  // namespace ktune::library

namespace ktune::kernels {

void Context::run(std::string_view family, std::initializer_list<TensorArgument> tensors,
                  std::initializer_list<DimArgument> dims, Precision precision, void* stream) {
  run(family, std::vector<TensorArgument>(tensors), std::vector<DimArgument>(dims), precision, stream);
}

void Context::run(std::string_view family_name, const std::vector<TensorArgument>& tensors,
                  const std::vector<DimArgument>& dims, Precision precision, void* stream) {
  library::guarded([&] {
    const KernelFamily& family = library::family_named(family_name);
    const Problem problem = library::problem_of(family, dims, precision);
    const std::vector<void*> ordered = library::tensors_in_order(family, problem, tensors);
    if (family.composition(problem)) {
      impl_->composed_call(family, problem, precision, stream)->launch(ordered, stream, impl_->stage_choice());
      return;
    }
    const std::shared_ptr<library::ChosenConfig> chosen = impl_->choice(family, problem);
    chosen->launch(ordered, stream);
  });
}

ConfigChoice Context::choose(std::string_view family_name, const std::vector<DimArgument>& dims, Precision precision) {
  return library::guarded([&] {
    const KernelFamily& family = library::family_named(family_name);
    const Problem problem = library::problem_of(family, dims, precision);
    if (family.composition(problem))  // the stages' choices; nothing allocated
      return library::ComposedCall(*impl_->executor, family, problem, precision).choice(impl_->stage_choice());
    return impl_->choice(family, problem)->choice;
  });
}

ConfigChoice Context::use_config(std::string_view family_name, const std::vector<DimArgument>& dims,
                                 Precision precision, std::string_view config) {
  return library::guarded([&] {
    const KernelFamily& family = library::family_named(family_name);
    const Problem problem = library::problem_of(family, dims, precision);
    if (family.composition(problem))
      throw Error(ErrorCode::bad_argument, family.name() + " runs its stages' configs (choose() lists them): give each "
                                           "stage's family its config with use_config");
    return impl_->give(family, problem, config)->choice;
  });
}

}  // namespace ktune::kernels
