#include "tuner/backends/hip/hip_backend.hpp"

#include <array>
#include <optional>

#include "tuner/backends/device_problem.hpp"
#include "tuner/backends/event_batch.hpp"
#include "tuner/backends/hip/hip_device.hpp"
#include "tuner/backends/hip/hip_library.hpp"
#include "tuner/backends/hip/hiprtc_compiler.hpp"
#include "tuner/backends/host_problem.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/measure/engine.hpp"

namespace ktune {
namespace {

// HIP's events, for the batched timing (event_batch.hpp).
struct HipEvents {
  using Event = hipEvent_t;
  static Event create() {
    hipEvent_t event = nullptr;
    KT_HIP(hipEventCreate(&event));
    return event;
  }
  static void record(Event event) { KT_HIP(hipEventRecord(event, nullptr)); }
  static void wait(Event event) { KT_HIP(hipEventSynchronize(event)); }
  static float elapsed_ms(Event from, Event to) {
    float ms = 0;
    KT_HIP(hipEventElapsedTime(&ms, from, to));
    return ms;
  }
  static void destroy(Event event) noexcept { (void)HipLibrary::runtime().hipEventDestroy(event); }
};

// HIP device memory as DeviceBuffer and DeviceProblem take it (tuner/backends/device_problem.hpp).
struct HipMemory {
  using Pointer = void*;
  static void* allocate(std::size_t bytes) {
    void* pointer = nullptr;
    KT_HIP(hipMalloc(&pointer, bytes));
    return pointer;
  }
  static std::optional<void*> allocate_unless_full(std::size_t bytes) {
    const HipLibrary& hip = HipLibrary::runtime();
    void* pointer = nullptr;
    const hipError_t allocated = hip.hipMalloc(&pointer, bytes);
    if (allocated == hipErrorOutOfMemory) return std::nullopt;
    hip.check(allocated, "hipMalloc", __FILE__, __LINE__);
    return pointer;
  }
  static void release(void* pointer) noexcept { (void)HipLibrary::runtime().hipFree(pointer); }
  static void upload(void* to, const void* from, std::size_t bytes) {
    KT_HIP(hipMemcpyHtoD(to, const_cast<void*>(from), bytes));  // ROCm 5 takes the source as non-const
  }
  static void copy(void* to, void* from, std::size_t bytes) { KT_HIP(hipMemcpyDtoD(to, from, bytes)); }
  static void zero(void* pointer, std::size_t bytes) { KT_HIP(hipMemsetD8(pointer, 0, bytes)); }
  static void poison(void* pointer, std::size_t bytes) { KT_HIP(hipMemsetD8(pointer, 0xFF, bytes)); }
  static void copy_queued(void* to, void* from, std::size_t bytes) { KT_HIP(hipMemcpyDtoDAsync(to, from, bytes, nullptr)); }
};

using HipBuffer = DeviceBuffer<HipMemory>;

}  // namespace

struct HipBackend::Impl final : MeasureTarget {
  int device = 0;
  DeviceInfo info;
  bool healthy = true;
  std::optional<HipBuffer> flush_buffer;  // written between samples to evict L2

  struct ProblemState : DeviceProblem<HipMemory> {
    explicit ProblemState(HostProblem&& host) : DeviceProblem(std::move(host)) {
      for (std::size_t t = 0; t < specs.size(); ++t) readback.emplace_back(specs[t].is_output ? buffers[t].bytes : 0);
    }
    // Each output's copy on the host (empty elsewhere), allocated once per problem.
    std::vector<std::vector<char>> readback;
  };
  std::unique_ptr<ProblemState> state;

  // The loaded module of the last variant; a tune evaluates one variant at a time.
  hipModule_t module = nullptr;
  std::string module_path;

  ~Impl() {
    if (module) (void)HipLibrary::runtime().hipModuleUnload(module);
  }

  void prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) override {
    if (state && state->key == host_problem_key(family, problem, seed)) return;
    state.reset();
    state = std::make_unique<ProblemState>(make_host_problem(family, problem, seed));
  }
  std::unique_ptr<LoadedVariant> load(const KernelFamily& family, const Problem& problem, const Config& config,
                                      const VariantBuild& build, EvaluationResult& result) override;
  std::optional<DeviceFault> fault(std::exception_ptr error, MeasurePhase phase) const override {
    // A memory fault and the like leave the device unusable: reported, then the worker ends.
    return judge_runtime_error<HipError>(error, phase);
  }

  hipFunction_t load_function(const std::string& path, const std::string& entry) {
    const HipLibrary& hip = HipLibrary::runtime();
    if (module && module_path != path) {
      (void)hip.hipModuleUnload(module);
      module = nullptr;
    }
    if (!module) {
      const std::string image = read_compiled_variant(path);
      KT_HIP(hipModuleLoadData(&module, image.data()));
      module_path = path;
    }
    hipFunction_t function = nullptr;
    KT_HIP(hipModuleGetFunction(&function, module, entry.c_str()));
    return function;
  }
};

HipBackend::HipBackend(int device_index) : impl_(std::make_unique<Impl>()) {
  Impl& self = *impl_;
  self.device = device_index;
  try {
    self.info = describe_hip_device(device_index);
  } catch (const BackendUnavailable& e) {
    std::string why = e.what();
    if (!why.empty() && why.back() == '.') why.pop_back();
    throw BackendUnavailable(why + ". Use --compile-only --arch gfx90a (or another target) to check HIP variants without a GPU.");
  }
  HipLibrary::runtime();                           // hiprtc too: a tune compiles
  self.info.properties["hiprtc_version"] = HiprtcCompiler::hiprtc_version();
  const auto l2 = self.info.limits.at("l2_bytes");
  // Twice the L2, so a flush really evicts everything the previous sample left there.
  self.flush_buffer.emplace(static_cast<std::size_t>(l2) * 2);
}

HipBackend::~HipBackend() = default;

const DeviceInfo& HipBackend::device() const { return impl_->info; }
bool HipBackend::healthy() const { return impl_->healthy; }
void HipBackend::prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
  impl_->prepare_problem(family, problem, seed);
}

// A loaded HIP variant bound to the problem's buffers, with everything its launch needs.
class HipVariant final : public LoadedVariant {
 public:
  HipVariant(HipBackend::Impl& backend, HipBackend::Impl::ProblemState& state, const Problem& problem)
      : backend_(backend), state_(state), problem_(problem) {}

  hipFunction_t function = nullptr;
  std::array<unsigned, 3> grid{}, block{};
  unsigned shared_bytes = 0;
  std::vector<void*> pointers;
  std::vector<long long> dims;
  std::vector<KernelArgument> listed;
  HipBuffer workspace;
  std::vector<void*> arguments;

  void run_poisoned() override {
    state_.poison_outputs();
    state_.restore();
    launch();
    KT_HIP(hipDeviceSynchronize());
  }

  std::vector<OutputCopy> read_outputs() override {
    std::vector<OutputCopy> copies;
    for (std::size_t t = 0; t < state_.specs.size(); ++t) {
      if (!state_.specs[t].is_output) continue;
      std::vector<char>& copy = state_.readback[t];
      KT_HIP(hipMemcpyDtoH(copy.data(), state_.buffers[t].pointer, copy.size()));
      copies.push_back({copy.data(), copy.size(), state_.specs[t].precision(problem_), state_.expected[t]});
    }
    return copies;
  }

  void warm_up(int runs) override {
    for (int i = 0; i < runs; ++i) {
      restore();
      launch();
    }
  }

  SampleBatch time(std::size_t count, bool flush) override {
    return events_.time(
        count,
        [&] {
          restore();  // before the flush, so that the restored data is not left in L2 either
          if (flush) KT_HIP(hipMemsetD8Async(backend_.flush_buffer->pointer, 0, backend_.flush_buffer->bytes, nullptr));
        },
        [&] { launch(); });
  }

 private:
  // Read-write tensors get their initial contents back before every launch (outside the timed
  // events), so every sample computes the same thing.
  void restore() { state_.restore(); }
  void launch() {
    KT_HIP(hipModuleLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                                 nullptr, arguments.data(), nullptr));
  }

  HipBackend::Impl& backend_;
  HipBackend::Impl::ProblemState& state_;
  const Problem& problem_;
  EventBatch<HipEvents> events_;
};

std::unique_ptr<LoadedVariant> HipBackend::Impl::load(const KernelFamily& family, const Problem& problem,
                                                       const Config& config, const VariantBuild& build,
                                                       EvaluationResult& result) {
  VariantBuild variant = build;
  if (variant.binary.empty()) {  // not built by the tuner: compile here
    const HiprtcCompiler compiler(info.architecture, default_binary_cache_dir());
    if (!compile_into(compiler, family, problem, config, variant, result)) return nullptr;
  }
  ProblemState& problem_state = *state;
  auto loaded = std::make_unique<HipVariant>(*this, problem_state, problem);
  try {
    loaded->function = load_function(variant.binary, variant.entry);
  } catch (const HipError& e) {  // any runtime error here, sticky or not: its code object did not load
    result.outcome = Outcome::launch_error;
    result.message = std::string("loading the variant failed: ") + e.what();
    return nullptr;
  }
  // MemType Constant tensors: copied into the module's __constant__ symbol of their name.
  auto find_constant = [this](const std::string& symbol) -> std::optional<ConstantSymbol<void*>> {
    const HipLibrary& hip = HipLibrary::runtime();
    ConstantSymbol<void*> found{nullptr, 0};
    const hipError_t looked_up = hip.hipModuleGetGlobal(&found.address, &found.bytes, module, symbol.c_str());
    if (looked_up == hipErrorNotFound) return std::nullopt;
    hip.check(looked_up, ("hipModuleGetGlobal(" + symbol + ")").c_str(), __FILE__, __LINE__);
    return found;
  };
  if (!copy_constant_tensors(problem_state, find_constant, loaded->note, result)) return nullptr;
  const auto grid_x = variant.launch_or("grid_x", 0);
  if (grid_x <= 0) {
    result.outcome = Outcome::unsupported;
    result.message = "the search space gives no positive launch.grid_x for this config";
    return nullptr;
  }
  if (variant.launch_or("cluster_x", 1) > 1 || !family.tensor_maps(problem, config).empty()) {
    result.outcome = Outcome::unsupported;
    result.message = "thread-block clusters and TMA descriptors are NVIDIA features; the HIP space must not select them";
    return nullptr;
  }
  // A workspace of launch.workspace_bytes, passed after the dims, as on CUDA.
  const auto workspace_bytes = variant.launch_or("workspace_bytes", -1);
  if (!allocate_workspace(workspace_bytes, loaded->workspace, result)) return nullptr;

  // Kernel parameters: the tensors' device pointers, then the dims as long long, then the
  // workspace when the space declares one (or the family's own argument list).
  for (const auto& buffer : problem_state.buffers) loaded->pointers.push_back(buffer.pointer);
  for (const auto& [name, value] : problem.dims) loaded->dims.push_back(value);
  loaded->listed = family.kernel_arguments(problem);
  loaded->arguments = kernel_parameters(loaded->pointers, loaded->dims, {},
                                        workspace_bytes >= 0 ? &loaded->workspace.pointer : nullptr, loaded->listed);
  const auto launch = [&](const char* name, std::int64_t fallback) {
    return static_cast<unsigned>(variant.launch_or(name, fallback));
  };
  loaded->grid = {launch("grid_x", 1), launch("grid_y", 1), launch("grid_z", 1)};
  loaded->block = {launch("block_x", 1), launch("block_y", 1), launch("block_z", 1)};
  loaded->shared_bytes = launch("shared_bytes", 0);
  return loaded;
}

EvaluationResult HipBackend::evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                                      const VariantBuild& build, const MeasureSettings& settings) {
  return measure_variant(*impl_, family, problem, config, build, settings, impl_->healthy);
}

}  // namespace ktune
