// ktune::kernels::Context: picks a backend, holds its executor, and remembers the config chosen
// for each family, shape and precision so that repeated calls pay for the choice once.
#include <algorithm>
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
  // Calls of composed families (attention_block) made ready, per problem, and their scratch per
  // family and stream: two streams running such calls at once must not share it.
  std::map<std::string, std::shared_ptr<library::ComposedCall>> composed;
  std::map<std::pair<std::string, void*>, std::shared_ptr<library::ComposedScratch>> scratch;
  std::map<std::string, std::shared_ptr<library::ComposedScratch>> first_scratch;  // per family

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

  void* allocate_tracked(std::size_t bytes) {
    void* memory = executor->allocate(bytes);
    std::lock_guard lock(mutex);
    allocations.insert(memory);
    return memory;
  }

  // The call of a composed family at `problem` made ready: its stages, and its constants
  // allocated at its first call (which a graph capture, allocating nothing, must not be).
  std::shared_ptr<library::ComposedCall> composed_call(const KernelFamily& family, const Problem& problem,
                                                       Precision precision, void* stream) {
    const std::string key = key_of(problem);
    {
      std::lock_guard lock(mutex);
      if (auto found = composed.find(key); found != composed.end()) return found->second;
    }
    if (executor->capturing(stream))
      throw Error(ErrorCode::unsupported, family.name() + " allocates at its first call at a shape, which a graph "
                                                          "capture forbids: call it once at this shape before capturing");
    auto made = std::make_shared<library::ComposedCall>(*executor, family, problem, precision);
    made->allocate_constants(*executor, [this](std::size_t bytes) { return allocate_tracked(bytes); });
    std::lock_guard lock(mutex);
    return composed.emplace(key, std::move(made)).first->second;
  }

  // Launches `call` on `stream` with the family's scratch there, grown first when the call needs
  // more: the device finishes what it has queued (old buffers may be in use) before they go. A
  // launch being captured cannot grow it: it takes the stream's scratch, else the family's first
  // (a warm-up's), when large enough.
  void launch_composed(const KernelFamily& family, const library::ComposedCall& call, std::span<void* const> tensors,
                       void* stream) {
    const std::vector<std::size_t>& needed = call.scratch_bytes();
    auto fits = [&](const library::ComposedScratch& s) {
      if (s.bytes.size() != needed.size() || s.buffers.size() != needed.size()) return false;
      for (std::size_t i = 0; i < needed.size(); ++i)
        if (s.bytes[i] < needed[i]) return false;
      return true;
    };
    const bool capturing = executor->capturing(stream);
    std::shared_ptr<library::ComposedScratch> held;
    {
      std::lock_guard lock(mutex);
      auto& slot = scratch[{family.name(), stream}];
      if (capturing && (!slot || !fits(*slot))) {
        const auto first = first_scratch.find(family.name());
        if (first == first_scratch.end() || !fits(*first->second))
          throw Error(ErrorCode::unsupported, family.name() + " at this shape needs more scratch than its calls so far "
                                                              "allocated, and a graph capture cannot allocate: call it "
                                                              "once at this shape before capturing");
        held = first->second;
      } else {
        if (!slot) slot = std::make_shared<library::ComposedScratch>();
        held = slot;
        first_scratch.emplace(family.name(), slot);
      }
    }
    std::lock_guard in_use(held->in_use);
    if (!fits(*held)) {
      std::vector<std::size_t> sizes = needed;
      for (std::size_t i = 0; i < sizes.size() && i < held->bytes.size(); ++i) sizes[i] = std::max(sizes[i], held->bytes[i]);
      executor->synchronize();
      for (void* old : held->buffers) {
        {
          std::lock_guard lock(mutex);
          allocations.erase(old);
        }
        executor->release(old);
      }
      held->buffers.clear();
      held->bytes.clear();  // empty until the new set is whole (an allocation may throw)
      std::vector<void*> fresh;
      for (const std::size_t bytes : sizes) fresh.push_back(allocate_tracked(bytes));
      held->buffers = std::move(fresh);
      held->bytes = std::move(sizes);
    }
    call.launch(tensors, stream, stage_choice(), held->buffers);
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
    if (family.composed()) {
      impl_->launch_composed(family, *impl_->composed_call(family, problem, precision, stream), ordered, stream);
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
    if (family.composed())  // the stages' choices; nothing allocated
      return library::ComposedCall(*impl_->executor, family, problem, precision).choice(impl_->stage_choice());
    return impl_->choice(family, problem)->choice;
  });
}

ConfigChoice Context::use_config(std::string_view family_name, const std::vector<DimArgument>& dims,
                                 Precision precision, std::string_view config) {
  return library::guarded([&] {
    const KernelFamily& family = library::family_named(family_name);
    const Problem problem = library::problem_of(family, dims, precision);
    if (family.composed())
      throw Error(ErrorCode::bad_argument, family.name() + " runs its stages' configs (choose() lists them): give each "
                                           "stage's family its config with use_config");
    return impl_->give(family, problem, config)->choice;
  });
}

}  // namespace ktune::kernels
