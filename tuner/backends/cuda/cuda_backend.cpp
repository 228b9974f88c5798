#include "tuner/backends/cuda/cuda_backend.hpp"
#include "tuner/backends/output_check.hpp"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <optional>

#include "kernels/common/cpu_numeric.hpp"
#include "tuner/backends/cuda/cuda_device.hpp"
#include "tuner/backends/cuda/cuda_driver.hpp"
#include "tuner/backends/cuda/cuda_buffer.hpp"
#include "tuner/backends/cuda/cuda_launch.hpp"
#include "tuner/backends/cuda/cuda_output_check.hpp"
#include "tuner/backends/cuda/nvml_monitor.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#include "tuner/backends/event_batch.hpp"
#include "tuner/backends/host_problem.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/measure/engine.hpp"
#include "tuner/measure/verify.hpp"

namespace ktune {
namespace {

// Page-locked host memory for reading outputs back: copies run at the bus's full speed, and the
// buffer is allocated once per problem instead of per config (a fresh vector zero-fills it). Plain
// memory when the driver refuses to pin that much.
struct HostReadback {
  char* pointer = nullptr;
  bool pinned = false;
  explicit HostReadback(std::size_t bytes) {
    void* host = nullptr;
    if (bytes > 0 && CudaDriver::get().cuMemHostAlloc(&host, bytes, 0) == CUDA_SUCCESS) {
      pointer = static_cast<char*>(host);
      pinned = true;
    } else {
      pointer = new char[bytes == 0 ? 1 : bytes];
    }
  }
  HostReadback(const HostReadback&) = delete;
  HostReadback& operator=(const HostReadback&) = delete;
  ~HostReadback() {
    if (pinned) CudaDriver::get().cuMemFreeHost(pointer);
    else delete[] pointer;
  }
};

// CUDA's events, for the batched timing (event_batch.hpp).
struct CudaEvents {
  using Event = CUevent;
  static Event create() {
    CUevent event = nullptr;
    KT_CU(cuEventCreate(&event, CU_EVENT_DEFAULT));
    return event;
  }
  static void record(Event event) { KT_CU(cuEventRecord(event, nullptr)); }
  static void wait(Event event) { KT_CU(cuEventSynchronize(event)); }
  static float elapsed_ms(Event from, Event to) {
    float ms = 0;
    KT_CU(cuEventElapsedTime(&ms, from, to));
    return ms;
  }
  static void destroy(Event event) noexcept { CudaDriver::get().cuEventDestroy(event); }
};

}  // namespace


struct CudaBackend::Impl final : MeasureTarget {
  CUdevice device = 0;
  CUcontext context = nullptr;
  DeviceInfo info;
  std::string pci_bus_id;
  std::optional<NvmlMonitor> nvml;
  bool healthy = true;
  std::optional<CudaBuffer> flush_buffer;  // written between samples to evict L2
  // Compiled at the first problem whose outputs it can check; null when that failed.
  std::unique_ptr<CudaOutputCheck> output_check;
  bool output_check_tried = false;

  struct ProblemState : DeviceProblem<CudaMemory> {
    using DeviceProblem::DeviceProblem;
    // The reference on the device: outputs are then checked where they are (CudaOutputCheck),
    // by closeness or relative L2 error as the family asks, instead of read back (a memory-bound
    // config's copy and host comparison took longer than its timing). Empty when the device has
    // no room for it or a precision is one the device check does not read.
    std::vector<CudaBuffer> expected_on_device;
    bool checks_on_device = false;
    std::unique_ptr<HostReadback> readback;  // every output, at readback_offset[t]
    std::vector<std::size_t> readback_offset;
    // The float64 reference being computed on the host's cores while the first configs are
    // measured (`expected` holds the rounded inputs until then); invalid once it is done. Last,
    // so that it is waited for before `expected` goes.
    std::future<void> reference;
  };
  std::unique_ptr<ProblemState> state;

  // The loaded module of the last variant; a tune evaluates one variant at a time.
  CUmodule module = nullptr;
  std::string module_path;

  ~Impl() {
    if (!context) return;  // the driver never came up: nothing to release
    const CudaDriver& cu = CudaDriver::get();
    if (module) cu.cuModuleUnload(module);
    state.reset();  // device memory goes before the context does
    flush_buffer.reset();
    if (context) cu.cuDevicePrimaryCtxRelease(device);
  }

  void prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) override;
  std::unique_ptr<LoadedVariant> load(const KernelFamily& family, const Problem& problem, const Config& config,
                                      const VariantBuild& build, EvaluationResult& result) override;
  std::optional<DeviceFault> fault(std::exception_ptr error, MeasurePhase phase) const override;

  ProblemState& problem_state(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
    if (state && state->key == host_problem_key(family, problem, seed)) return *state;
    state.reset();
    // The reference is computed while configs are measured, unless it is captured from a config
    // (a T1 spec) or nothing is checked against it.
    const bool in_background = family.verifies(problem) && !family.reference_from_config(problem);
    auto fresh = std::make_unique<ProblemState>(make_host_problem(family, problem, seed, /*with_reference=*/!in_background));
    std::size_t readback_bytes = 0;
    for (std::size_t t = 0; t < fresh->specs.size(); ++t) {
      fresh->readback_offset.push_back(readback_bytes);
      if (fresh->specs[t].is_output) readback_bytes += fresh->buffers[t].bytes;
    }
    fresh->readback = std::make_unique<HostReadback>(readback_bytes);
    if (in_background)
      fresh->reference = std::async(std::launch::async, [&family, problem, &expected = fresh->expected] {
        family.reference(problem, expected);
      });
    else
      fresh->checks_on_device = family.verifies(problem) && upload_reference(*fresh, problem);
    state = std::move(fresh);
    return *state;
  }

  bool reference_pending(const ProblemState& problem_state) const {
    return problem_state.reference.valid() &&
           problem_state.reference.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  }
  // Waits for the reference computed in the background, then puts it on the device.
  void ensure_reference(ProblemState& problem_state, const Problem& problem) {
    if (!problem_state.reference.valid()) return;
    problem_state.reference.get();  // rethrows what the reference threw
    problem_state.checks_on_device = upload_reference(problem_state, problem);
  }

  // The reference of every output as float64 on the device; false (nothing kept) when a
  // precision is one the device check does not read, the check cannot be compiled, or the
  // device has no room, which leaves the check to the host.
  bool upload_reference(ProblemState& fresh, const Problem& problem) {
    // KTUNE_OUTPUT_CHECK=host reads every config's outputs back and compares them on the host
    // (the same figures, measured on an H100: reports/t1-kernel-tuner/README.md).
    const char* where = std::getenv("KTUNE_OUTPUT_CHECK");
    const std::string chosen = where ? where : "";
    if (chosen == "host") return false;
    if (!output_check_tried) {
      output_check_tried = true;
      if (!chosen.empty() && chosen != "device")
        std::fprintf(stderr, "ktune: KTUNE_OUTPUT_CHECK=%s is neither 'device' nor 'host'; outputs are checked on the device\n",
                     chosen.c_str());
      std::string why_not;
      output_check = CudaOutputCheck::make(info.properties.at("compile_arch").get<std::string>(), why_not);
      if (!output_check) std::fprintf(stderr, "ktune: outputs are checked on the host: %s\n", why_not.c_str());
    }
    if (!output_check) return false;
    std::vector<CudaBuffer> uploaded(fresh.specs.size());
    for (std::size_t t = 0; t < fresh.specs.size(); ++t) {
      if (!fresh.specs[t].is_output) continue;
      if (!CudaOutputCheck::supports(fresh.specs[t].precision(problem))) return false;
      const std::vector<double>& expected = fresh.expected[t];
      auto buffer = CudaBuffer::try_allocate(expected.size() * sizeof(double));
      if (!buffer) return false;
      KT_CU(cuMemcpyHtoD(buffer->pointer, expected.data(), expected.size() * sizeof(double)));
      uploaded[t] = std::move(*buffer);
    }
    fresh.expected_on_device = std::move(uploaded);
    return true;
  }

  CUfunction load_function(const std::string& path, const std::string& entry) {
    const CudaDriver& cu = CudaDriver::get();
    if (module && module_path != path) {
      cu.cuModuleUnload(module);
      module = nullptr;
    }
    if (!module) {
      const std::string image = read_compiled_variant(path);
      KT_CU(cuModuleLoadData(&module, image.data()));
      module_path = path;
    }
    CUfunction function = nullptr;
    KT_CU(cuModuleGetFunction(&function, module, entry.c_str()));
    return function;
  }
};

CudaBackend::CudaBackend(int device_index) : impl_(std::make_unique<Impl>()) {
  CudaDriver::get();  // BackendUnavailable, saying what is missing, when there is no driver
  int count = 0;
  KT_CU(cuDeviceGetCount(&count));
  if (count == 0) throw BackendUnavailable("no CUDA device: the NVIDIA driver reports no GPU");
  if (device_index < 0 || device_index >= count)
    throw BackendUnavailable("no CUDA device " + std::to_string(device_index) + ": this machine has " +
                             std::to_string(count));
  Impl& self = *impl_;
  KT_CU(cuDeviceGet(&self.device, device_index));
  KT_CU(cuDevicePrimaryCtxRetain(&self.context, self.device));
  KT_CU(cuCtxSetCurrent(self.context));

  char bus[64] = {};
  KT_CU(cuDeviceGetPCIBusId(bus, sizeof bus, self.device));
  self.pci_bus_id = bus;
  self.nvml.emplace(self.pci_bus_id);
  DeviceInfo& info = self.info;
  info = describe_cuda_device(self.device);
  info.properties["nvrtc_version"] = NvrtcCompiler::nvrtc_version();
  info.properties["nvml"] = self.nvml->available();
  info.properties["monitor"] = self.nvml->read();
  const std::int64_t l2 = info.limits.at("l2_bytes");
  // Twice the L2, so a flush really evicts everything the previous sample left there.
  self.flush_buffer.emplace(static_cast<std::size_t>(l2) * 2);
}

CudaBackend::~CudaBackend() = default;

const DeviceInfo& CudaBackend::device() const { return impl_->info; }
bool CudaBackend::healthy() const { return impl_->healthy; }
bool CudaBackend::reference_ready() const { return !impl_->state || !impl_->reference_pending(*impl_->state); }
void CudaBackend::prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
  impl_->problem_state(family, problem, seed);
}

// A loaded CUDA variant bound to the problem's buffers, with everything its launch needs.
class CudaVariant final : public LoadedVariant {
 public:
  CudaVariant(CudaBackend::Impl& backend, CudaBackend::Impl::ProblemState& state, const Problem& problem)
      : backend_(backend), state_(state), problem_(problem) {}

  CUfunction function = nullptr;
  KernelGeometry geometry;
  std::vector<CUdeviceptr> pointers;
  std::vector<long long> dims;
  std::vector<CUtensorMap> tensor_maps;
  std::vector<KernelArgument> listed;
  CudaBuffer workspace;
  std::vector<void*> arguments;

  void run_poisoned() override {
    state_.poison_outputs();
    state_.restore();
    launch();
    KT_CU(cuCtxSynchronize());
  }

  bool reference_pending() const override { return backend_.reference_pending(state_); }

  std::optional<OutputCheck> check_on_device(const KernelFamily& family, const Problem& problem) override {
    backend_.ensure_reference(state_, problem);
    if (!state_.checks_on_device) return std::nullopt;
    std::vector<DeviceOutput> on_device;
    for (std::size_t t = 0; t < state_.specs.size(); ++t)
      if (state_.specs[t].is_output)
        on_device.push_back({state_.buffers[t].pointer, state_.specs[t].precision(problem),
                             state_.expected_on_device[t].pointer, state_.expected[t].size()});
    if (const auto close = family.closeness())
      return judge_closeness(backend_.output_check->closeness(on_device, close->atol, close->rtol), *close);
    const double error = backend_.output_check->relative_l2(on_device);
    return OutputCheck{error, judge_error(error, family.tolerance(problem.precision))};
  }

  std::vector<OutputCopy> read_outputs() override {
    backend_.ensure_reference(state_, problem_);
    std::vector<OutputCopy> copies;
    for (std::size_t t = 0; t < state_.specs.size(); ++t) {
      if (!state_.specs[t].is_output) continue;
      char* copy = state_.readback->pointer + state_.readback_offset[t];
      KT_CU(cuMemcpyDtoH(copy, state_.buffers[t].pointer, state_.buffers[t].bytes));
      copies.push_back({copy, state_.buffers[t].bytes, state_.specs[t].precision(problem_), state_.expected[t]});
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
          if (flush) KT_CU(cuMemsetD8Async(backend_.flush_buffer->pointer, 0, backend_.flush_buffer->bytes, nullptr));
        },
        [&] { launch(); });
  }

  nlohmann::json monitor() override { return backend_.nvml->read(); }

 private:
  // Read-write tensors get their initial contents back before every launch (outside the timed
  // events), so every sample computes the same thing.
  void restore() { state_.restore(); }
  void launch() { launch_kernel(function, geometry, arguments.data(), nullptr); }

  CudaBackend::Impl& backend_;
  CudaBackend::Impl::ProblemState& state_;
  const Problem& problem_;
  EventBatch<CudaEvents> events_;
};

void CudaBackend::Impl::prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
  problem_state(family, problem, seed);
}

std::optional<DeviceFault> CudaBackend::Impl::fault(std::exception_ptr error, MeasurePhase phase) const {
  // Illegal address and the like poison the context: reported, then the worker ends.
  return judge_runtime_error<CudaError>(error, phase);
}

std::unique_ptr<LoadedVariant> CudaBackend::Impl::load(const KernelFamily& family, const Problem& problem,
                                                        const Config& config, const VariantBuild& build,
                                                        EvaluationResult& result) {
  VariantBuild variant = build;
  if (variant.binary.empty()) {  // not built by the tuner: compile here
    const NvrtcCompiler compiler(info.properties.at("compile_arch").get<std::string>(), default_binary_cache_dir());
    if (!compile_into(compiler, family, problem, config, variant, result)) return nullptr;
  }
  ProblemState& problem_state = *state;
  auto loaded = std::make_unique<CudaVariant>(*this, problem_state, problem);
  try {
    loaded->function = load_function(variant.binary, variant.entry);
  } catch (const CudaError& e) {
    if (e.sticky()) throw;
    result.outcome = Outcome::launch_error;
    result.message = std::string("loading the variant failed: ") + e.what();
    return nullptr;
  }
  // MemType Constant tensors: copied into the module's __constant__ symbol of their name.
  auto find_constant = [this](const std::string& symbol) -> std::optional<ConstantSymbol<CUdeviceptr>> {
    ConstantSymbol<CUdeviceptr> found{0, 0};
    const CUresult looked_up = CudaDriver::get().cuModuleGetGlobal(&found.address, &found.bytes, module, symbol.c_str());
    if (looked_up == CUDA_ERROR_NOT_FOUND) return std::nullopt;
    CudaDriver::get().check(looked_up, ("cuModuleGetGlobal(" + symbol + ")").c_str(), __FILE__, __LINE__);
    return found;
  };
  if (!copy_constant_tensors(problem_state, find_constant, loaded->note, result)) return nullptr;
  const auto grid_x = variant.launch_or("grid_x", 0);
  if (grid_x <= 0) {
    result.outcome = Outcome::unsupported;
    result.message = "the search space gives no positive launch.grid_x for this config";
    return nullptr;
  }
  const auto shared_bytes = variant.launch_or("shared_bytes", 0);
  // Static and dynamic shared memory together above 48 KiB need the opt-in attribute, and a
  // module loaded earlier may carry a smaller one: set it for every launch that uses any.
  if (shared_bytes > 0) {
    try {
      KT_CU(cuFuncSetAttribute(loaded->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               static_cast<int>(shared_bytes)));
    } catch (const CudaError& e) {
      if (e.sticky()) throw;
      result.outcome = Outcome::launch_error;
      result.message = "the variant's static shared memory plus launch.shared_bytes " + std::to_string(shared_bytes) +
                       " exceed the device's limit: " + e.what();
      return nullptr;
    }
  }

  // A space may give each variant a device workspace (launch.workspace_bytes); the kernel then
  // takes its pointer after the dims (null for 0 bytes).
  const auto workspace_bytes = variant.launch_or("workspace_bytes", -1);
  if (!allocate_workspace(workspace_bytes, loaded->workspace, result)) return nullptr;

  // Kernel parameters: the tensors' device pointers, then the dims as long long, then the
  // config's TMA descriptors, then the workspace when the space declares one.
  for (const auto& buffer : problem_state.buffers) loaded->pointers.push_back(buffer.pointer);
  for (const auto& [name, value] : problem.dims) loaded->dims.push_back(value);
  for (const TensorMapSpec& spec : family.tensor_maps(problem, config)) {
    std::string why;
    loaded->tensor_maps.push_back(
        encode_tensor_map(spec, loaded->pointers, loaded->workspace.pointer, problem.precision, why));
    if (!why.empty()) {
      result.outcome = Outcome::unsupported;
      result.message = "TMA descriptor of " + tensor_map_target(spec) + ": " + why;
      return nullptr;
    }
  }
  // A family may order its arguments itself and pass typed scalars (a T1 spec's kernel).
  loaded->listed = family.kernel_arguments(problem);
  std::vector<void*> maps;
  for (auto& map : loaded->tensor_maps) maps.push_back(&map);
  loaded->arguments = kernel_parameters(loaded->pointers, loaded->dims, maps,
                                        workspace_bytes >= 0 ? &loaded->workspace.pointer : nullptr, loaded->listed);
  loaded->geometry = KernelGeometry::from(variant.launch);
  const auto cluster_x = variant.launch_or("cluster_x", 1);
  if (cluster_x > 1 && grid_x % cluster_x != 0) {
    result.outcome = Outcome::unsupported;
    result.message = "launch.grid_x " + std::to_string(grid_x) + " is not a multiple of launch.cluster_x " +
                     std::to_string(cluster_x);
    return nullptr;
  }
  return loaded;
}

EvaluationResult CudaBackend::evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                                       const VariantBuild& build, const MeasureSettings& settings) {
  return measure_variant(*impl_, family, problem, config, build, settings, impl_->healthy);
}

}  // namespace ktune
