#include "tuner/backends/hip/hip_backend.hpp"

#include <optional>

#include "tuner/backends/gpu_source.hpp"
#include "tuner/backends/hip/hip_device.hpp"
#include "tuner/backends/hip/hip_library.hpp"
#include "tuner/backends/hip/hiprtc_compiler.hpp"
#include "tuner/backends/host_problem.hpp"
#include "tuner/backends/output_check.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/measure/verify.hpp"

namespace ktune {
namespace {

// Device memory freed on scope exit; the no-throw release suits destructors.
struct DeviceBuffer {
  void* pointer = nullptr;
  std::size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size) : bytes(size) { KT_HIP(hipMalloc(&pointer, size == 0 ? 1 : size)); }
  DeviceBuffer(DeviceBuffer&& other) noexcept : pointer(other.pointer), bytes(other.bytes) { other.pointer = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(pointer, other.pointer);
    std::swap(bytes, other.bytes);
    return *this;
  }
  ~DeviceBuffer() {
    if (pointer) (void)HipLibrary::runtime().hipFree(pointer);
  }
};

}  // namespace

struct HipBackend::Impl {
  int device = 0;
  DeviceInfo info;
  bool healthy = true;
  std::optional<DeviceBuffer> flush_buffer;  // written between samples to evict L2

  struct ProblemState {
    std::string key;
    std::vector<TensorSpec> specs;
    std::vector<DeviceBuffer> buffers;
    std::vector<DeviceBuffer> pristine;  // initial contents of the read-write tensors, as on CUDA
    HostTensors expected;
  };
  std::unique_ptr<ProblemState> state;

  // The loaded module of the last variant; a tune evaluates one variant at a time.
  hipModule_t module = nullptr;
  std::string module_path;

  ~Impl() {
    if (module) (void)HipLibrary::runtime().hipModuleUnload(module);
  }

  ProblemState& prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
    if (state && state->key == host_problem_key(family, problem, seed)) return *state;
    state.reset();
    HostProblem host = make_host_problem(family, problem, seed);
    auto fresh = std::make_unique<ProblemState>();
    fresh->key = host.key;
    fresh->specs = host.specs;
    for (std::size_t t = 0; t < host.specs.size(); ++t) {
      fresh->buffers.emplace_back(host.bytes[t]);
      if (!host.stored[t].empty())
        KT_HIP(hipMemcpyHtoD(fresh->buffers.back().pointer, host.stored[t].data(), host.stored[t].size()));
      fresh->pristine.emplace_back();
      if (host.specs[t].read_write) {
        fresh->pristine.back() = DeviceBuffer(host.bytes[t]);
        KT_HIP(hipMemcpyDtoD(fresh->pristine.back().pointer, fresh->buffers.back().pointer, host.bytes[t]));
      }
    }
    fresh->expected = std::move(host.expected);
    state = std::move(fresh);
    return *state;
  }

  hipFunction_t load(const std::string& path, const std::string& entry) {
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

EvaluationResult HipBackend::evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                                      const VariantBuild& build, const MeasureSettings& settings) {
  Impl& self = *impl_;
  const HipLibrary& hip = HipLibrary::runtime();
  EvaluationResult result;
  result.compile_ms = build.compile_ms;
  VariantBuild variant = build;
  if (variant.binary.empty()) {  // not built by the tuner: compile here
    const HiprtcCompiler compiler(self.info.architecture, default_binary_cache_dir());
    if (!compile_into(compiler, family, problem, config, variant, result)) return result;
  }

  try {
    Impl::ProblemState& state = self.prepare_problem(family, problem, settings.seed);
    hipFunction_t function = nullptr;
    try {
      function = self.load(variant.binary, variant.entry);
    } catch (const HipError& e) {
      result.outcome = Outcome::launch_error;
      result.message = std::string("loading the variant failed: ") + e.what();
      return result;
    }
    // MemType Constant tensors: copied into the module's __constant__ symbol of their name.
    std::string constant_note;
    for (std::size_t t = 0; t < state.specs.size(); ++t) {
      const std::string& symbol = state.specs[t].constant_symbol;
      if (symbol.empty()) continue;
      hipDeviceptr_t address = nullptr;
      std::size_t size = 0;
      const hipError_t found = hip.hipModuleGetGlobal(&address, &size, self.module, symbol.c_str());
      if (found == hipErrorNotFound) {  // this variant does not read it (compiled out)
        constant_note += "; no __constant__ " + symbol + " in this variant";
        continue;
      }
      hip.check(found, ("hipModuleGetGlobal(" + symbol + ")").c_str(), __FILE__, __LINE__);
      if (size < state.buffers[t].bytes) {
        result.outcome = Outcome::unsupported;
        result.message = "__constant__ " + symbol + " holds " + std::to_string(size) + " bytes, but the argument has " +
                         std::to_string(state.buffers[t].bytes) + "; make the symbol at least as large as its Size";
        return result;
      }
      KT_HIP(hipMemcpyDtoD(address, state.buffers[t].pointer, state.buffers[t].bytes));
    }
    const auto grid_x = variant.launch_or("grid_x", 0);
    if (grid_x <= 0) {
      result.outcome = Outcome::unsupported;
      result.message = "the search space gives no positive launch.grid_x for this config";
      return result;
    }
    if (variant.launch_or("cluster_x", 1) > 1 || !family.tensor_maps(problem, config).empty()) {
      result.outcome = Outcome::unsupported;
      result.message = "thread-block clusters and TMA descriptors are NVIDIA features; the HIP space must not select them";
      return result;
    }
    const auto shared_bytes = variant.launch_or("shared_bytes", 0);

    // A workspace of launch.workspace_bytes, passed after the dims, as on CUDA.
    const auto workspace_bytes = variant.launch_or("workspace_bytes", -1);
    DeviceBuffer workspace;
    if (workspace_bytes > 0) {
      const hipError_t allocated = hip.hipMalloc(&workspace.pointer, static_cast<std::size_t>(workspace_bytes));
      if (allocated != hipSuccess) workspace.pointer = nullptr;
      if (allocated == hipErrorOutOfMemory) {
        result.outcome = Outcome::out_of_memory;
        result.message = "the variant's workspace of " + std::to_string(workspace_bytes) +
                         " bytes (launch.workspace_bytes) could not be allocated: " + hip.error_text(allocated);
        return result;
      }
      hip.check(allocated, "hipMalloc(workspace)", __FILE__, __LINE__);
      workspace.bytes = static_cast<std::size_t>(workspace_bytes);
      KT_HIP(hipMemsetD8(workspace.pointer, 0, workspace.bytes));
    }

    // Kernel parameters: the tensors' device pointers, then the dims as long long, then the
    // workspace when the space declares one (or the family's own argument list).
    std::vector<void*> pointers;
    for (const auto& buffer : state.buffers) pointers.push_back(buffer.pointer);
    std::vector<long long> dims;
    for (const auto& [name, value] : problem.dims) dims.push_back(value);
    std::vector<void*> arguments;
    std::vector<KernelArgument> listed = family.kernel_arguments(problem);
    if (listed.empty()) {
      for (auto& pointer : pointers) arguments.push_back(&pointer);
      for (auto& dim : dims) arguments.push_back(&dim);
      if (workspace_bytes >= 0) arguments.push_back(&workspace.pointer);
    } else {
      for (KernelArgument& argument : listed)
        arguments.push_back(argument.tensor >= 0 ? static_cast<void*>(&pointers.at(static_cast<std::size_t>(argument.tensor)))
                                                 : static_cast<void*>(argument.bytes.data()));
    }
    const auto grid_y = variant.launch_or("grid_y", 1), grid_z = variant.launch_or("grid_z", 1);
    const auto block_x = variant.launch_or("block_x", 1), block_y = variant.launch_or("block_y", 1),
               block_z = variant.launch_or("block_z", 1);
    auto launch = [&] {
      KT_HIP(hipModuleLaunchKernel(function, static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y),
                                   static_cast<unsigned>(grid_z), static_cast<unsigned>(block_x),
                                   static_cast<unsigned>(block_y), static_cast<unsigned>(block_z),
                                   static_cast<unsigned>(shared_bytes), nullptr, arguments.data(), nullptr));
    };

    // Read-write tensors get their initial contents back before every launch, as on CUDA.
    auto restore = [&] {
      for (std::size_t t = 0; t < state.specs.size(); ++t)
        if (state.specs[t].read_write)
          KT_HIP(hipMemcpyDtoDAsync(state.buffers[t].pointer, state.pristine[t].pointer, state.buffers[t].bytes, nullptr));
    };

    // Verification on poisoned outputs: 0xFF bytes are NaN in every float format.
    for (std::size_t t = 0; t < state.specs.size(); ++t)
      if (state.specs[t].is_output && !state.specs[t].read_write)
        KT_HIP(hipMemsetD8(state.buffers[t].pointer, 0xFF, state.buffers[t].bytes));
    try {
      restore();
      launch();
      KT_HIP(hipDeviceSynchronize());
    } catch (const HipError& e) {
      if (e.sticky()) throw;
      result.outcome = Outcome::launch_error;
      result.message = e.what();
      return result;
    }
    std::vector<std::vector<char>> copies;
    copies.reserve(state.specs.size());  // outputs points into these: no reallocation
    std::vector<StoredOutput> outputs;
    for (std::size_t t = 0; t < state.specs.size(); ++t) {
      if (!state.specs[t].is_output) continue;
      copies.emplace_back(state.buffers[t].bytes);
      KT_HIP(hipMemcpyDtoH(copies.back().data(), state.buffers[t].pointer, copies.back().size()));
      outputs.push_back({copies.back().data(), state.specs[t].precision(problem), state.expected[t]});
    }
    if (settings.capture_reference) {
      std::vector<std::string_view> raw;
      for (const auto& copy : copies) raw.emplace_back(copy.data(), copy.size());
      family.keep_reference(problem, raw);
    }
    const bool verifies = !settings.capture_reference && family.verifies(problem);
    const OutputCheck check = verifies ? check_outputs(family, problem, outputs) : OutputCheck{-1.0, Verdict{true, ""}};
    result.error = check.error;
    Verdict verdict = check.verdict;
    if (settings.capture_reference) verdict.message = "kept as the reference of the other configs";
    if (!verdict.passed) {
      result.outcome = Outcome::wrong_result;
      result.message = verdict.message;
      return result;
    }

    for (int i = 0; i < settings.warmup_runs; ++i) {
      restore();
      launch();
    }
    hipEvent_t start = nullptr, stop = nullptr;
    KT_HIP(hipEventCreate(&start));
    KT_HIP(hipEventCreate(&stop));
    const bool flush = family.memory_bound();
    StoppingRule rule(settings.stopping);
    while (!rule.done()) {
      restore();  // before the flush, so that the restored data is not left in L2 either
      if (flush) KT_HIP(hipMemsetD8Async(self.flush_buffer->pointer, 0, self.flush_buffer->bytes, nullptr));
      KT_HIP(hipEventRecord(start, nullptr));
      launch();
      KT_HIP(hipEventRecord(stop, nullptr));
      KT_HIP(hipEventSynchronize(stop));
      float ms = 0;
      KT_HIP(hipEventElapsedTime(&ms, start, stop));
      result.samples_ns.push_back(ms * 1e6);
      rule.add(ms * 1e6);
    }
    (void)hip.hipEventDestroy(start);
    (void)hip.hipEventDestroy(stop);
    result.environment["l2_flushed"] = flush;
    result.stats = summarize(result.samples_ns);
    result.outcome = Outcome::ok;
    result.message = verdict.message + "; " + rule.reason() + constant_note;
    return result;
  } catch (const HipError& e) {
    // A memory fault and the like leave the device unusable: report, then let the worker end.
    if (!e.sticky()) throw;
    self.healthy = false;
    result.outcome = Outcome::crashed;
    result.message = e.what();
    result.samples_ns.clear();
    return result;
  }
}

}  // namespace ktune
