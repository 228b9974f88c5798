#include "tuner/backends/vulkan/vulkan_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

#include "tuner/backends/gpu_source.hpp"
#include "tuner/backends/host_problem.hpp"
#include "tuner/backends/vulkan/spirv_reflection.hpp"
#include "tuner/backends/vulkan/vulkan_context.hpp"
#include "tuner/backends/vulkan/vulkan_dispatch.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/measure/engine.hpp"

namespace ktune {

struct VulkanBackend::Impl final : MeasureTarget {
  std::unique_ptr<VulkanContext> context;
  bool healthy = true;
  std::unique_ptr<VulkanSubmitter> submitter;
  // Timestamps of a batch of samples, grown to the largest batch asked for.
  VkQueryPool queries = VK_NULL_HANDLE;
  std::uint32_t query_capacity = 0;
  bool warmed_up_before = false;          // the process's first config warms the clocks up for longer
  std::unique_ptr<VulkanBuffer> staging;  // host-visible, for uploads and read-backs
  std::unique_ptr<VulkanBuffer> flush;    // written between samples to evict caches

  struct ProblemState {
    std::string key;
    std::vector<TensorSpec> specs;
    std::vector<std::unique_ptr<VulkanBuffer>> buffers;
    HostTensors expected;
    std::vector<std::uint32_t> push_constants;  // the dims
    std::string unsupported;  // why this device cannot hold the problem; empty when it can
    std::unique_ptr<VulkanBindings> bindings;  // the buffers, bound once for every config
  };
  std::unique_ptr<ProblemState> state;

  // The shader module of the last variant and its specialization constants by name.
  VkShaderModule module = VK_NULL_HANDLE;
  std::string module_path;
  std::map<std::string, SpecializationConstant> constants;

  ~Impl() {
    if (!context) return;
    VulkanLibrary& vk = VulkanLibrary::get();
    const VkDevice device = context->device();
    vk.vkDeviceWaitIdle(device);
    if (module) vk.vkDestroyShaderModule(device, module, nullptr);
    state.reset();
    staging.reset();
    flush.reset();
    if (queries) vk.vkDestroyQueryPool(device, queries, nullptr);
    submitter.reset();
  }

  void prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) override {
    problem_state(family, problem, seed);
  }
  std::unique_ptr<LoadedVariant> load(const KernelFamily& family, const Problem& problem, const Config& config,
                                      const VariantBuild& build, EvaluationResult& result) override;
  std::optional<DeviceFault> fault(std::exception_ptr error, MeasurePhase phase) const override;

  VkDevice device() const { return context->device(); }

  // Records commands with `record`, submits them and waits for the device to finish them.
  template <typename Record>
  void submit(Record record) {
    submitter->submit(record);
  }
  // Submits the command buffer as recorded and waits for it.
  void run_recorded() { submitter->run_recorded(); }

  // A query pool of at least `count` timestamps: a batch larger than every one before replaces it
  // by one at least twice as large (a command buffer recorded for the old pool is re-recorded).
  VkQueryPool query_pool(std::uint32_t count) {
    if (count <= query_capacity) return queries;
    VulkanLibrary& vk = VulkanLibrary::get();
    const std::uint32_t capacity = std::max(count, 2 * query_capacity);
    if (queries) vk.vkDestroyQueryPool(device(), queries, nullptr);
    queries = VK_NULL_HANDLE;
    query_capacity = 0;
    VkQueryPoolCreateInfo create{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    create.queryType = VK_QUERY_TYPE_TIMESTAMP;
    create.queryCount = capacity;
    KT_VK(vkCreateQueryPool(device(), &create, nullptr, &queries));
    query_capacity = capacity;
    return queries;
  }

  // Dispatches back to back, batches of 16 per submit, before a config's timed samples, until the
  // batches stop getting faster: at least kMinWarmup (kFirstWarmup for the process's first
  // config), at most kMaxWarmup. A GPU that idled while the CPU made a problem's inputs and
  // reference (seconds at large shapes) runs its first dispatches at lowered clocks, and a couple
  // of warm-up runs do not bring them back up: on an H100 the same config timed first after such a
  // pause measured up to 3x slower than when timed later in a tune, and on an H200 a fixed 100 ms
  // left the first config of a process 4-5x slow (reports/vulkan.md). Outputs are not read after.
  template <typename Record>
  void warm_up_clocks(Record dispatch) {
    using Clock = std::chrono::steady_clock;
    constexpr auto kMinWarmup = std::chrono::milliseconds(100);
    constexpr auto kFirstWarmup = std::chrono::milliseconds(500);
    constexpr auto kMaxWarmup = std::chrono::milliseconds(1500);
    constexpr double kStillSpeedingUp = 0.97;  // a batch 3% faster than every earlier one
    constexpr int kBatch = 16;
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    const VkCommandBuffer commands = submitter->commands();
    KT_VK(vkBeginCommandBuffer(commands, &begin));
    for (int i = 0; i < kBatch; ++i) dispatch(commands);
    KT_VK(vkEndCommandBuffer(commands));
    const auto least = warmed_up_before ? Clock::duration(kMinWarmup) : Clock::duration(kFirstWarmup);
    warmed_up_before = true;
    const auto started = Clock::now();
    auto fastest = Clock::duration::max();
    for (;;) {
      const auto batch_start = Clock::now();
      run_recorded();
      const auto now = Clock::now();
      const auto took = now - batch_start;
      const bool speeding_up = took.count() < kStillSpeedingUp * static_cast<double>(fastest.count());
      fastest = std::min(fastest, took);
      if (now - started >= kMaxWarmup || (now - started >= least && !speeding_up)) break;
    }
  }

  VulkanBuffer& staging_of(VkDeviceSize bytes) {
    if (!staging || staging->bytes < bytes) {
      staging.reset();
      staging = std::make_unique<VulkanBuffer>(*context, bytes, kVulkanHostVisible);
    }
    return *staging;
  }

  ProblemState& problem_state(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
    if (state && state->key == host_problem_key(family, problem, seed)) return *state;
    state.reset();
    VulkanLibrary& vk = VulkanLibrary::get();
    HostProblem host = make_host_problem(family, problem, seed);
    auto fresh = std::make_unique<ProblemState>();
    fresh->key = host.key;
    fresh->specs = host.specs;
    fresh->push_constants = dims_as_push_constants(problem, fresh->unsupported);
    for (std::size_t t = 0; t < host.specs.size(); ++t)
      if (host.bytes[t] > context->max_storage_buffer_range())
        fresh->unsupported = "tensor " + host.specs[t].name + " takes " + std::to_string(host.bytes[t]) +
                             " bytes, above the device's maxStorageBufferRange of " +
                             std::to_string(context->max_storage_buffer_range());
    for (std::size_t t = 0; t < host.specs.size(); ++t) {
      fresh->buffers.push_back(std::make_unique<VulkanBuffer>(*context, host.bytes[t], kVulkanDeviceLocal));
      if (host.stored[t].empty()) continue;
      VulkanBuffer& upload = staging_of(host.stored[t].size());
      std::memcpy(upload.mapped, host.stored[t].data(), host.stored[t].size());
      VkBufferCopy region{0, 0, host.stored[t].size()};
      const VkBuffer target = fresh->buffers.back()->buffer;
      submit([&](VkCommandBuffer c) { vk.vkCmdCopyBuffer(c, upload.buffer, target, 1, &region); });
    }
    fresh->expected = std::move(host.expected);

    // One storage buffer per tensor, in tensors() order; the dims as push constants.
    fresh->bindings = std::make_unique<VulkanBindings>(
        device(), static_cast<std::uint32_t>(fresh->buffers.size()),
        static_cast<std::uint32_t>(fresh->push_constants.size() * sizeof(std::uint32_t)));
    std::vector<VkBuffer> buffers;
    for (const auto& buffer : fresh->buffers) buffers.push_back(buffer->buffer);
    fresh->bindings->bind(buffers);
    state = std::move(fresh);
    return *state;
  }

  void load_module(const std::string& path) {
    if (module && module_path == path) return;
    VulkanLibrary& vk = VulkanLibrary::get();
    if (module) vk.vkDestroyShaderModule(device(), module, nullptr);
    module = VK_NULL_HANDLE;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read the compiled variant " + path);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() % 4 != 0 || bytes.empty()) throw std::runtime_error(path + " is not a SPIR-V module");
    std::vector<std::uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    constants = specialization_constants(words);
    module = create_shader_module(device(), words);
    module_path = path;
  }
};

VulkanBackend::VulkanBackend(int device_index) : impl_(std::make_unique<Impl>()) {
  Impl& self = *impl_;
  self.context = std::make_unique<VulkanContext>(device_index);
  self.submitter = std::make_unique<VulkanSubmitter>(*self.context);
  // Larger than any GPU's last-level cache (the H200's L2 is 60 MB); a CPU device (lavapipe)
  // gets a smaller one, as filling it is slow there.
  const VkDeviceSize flush_bytes = self.context->is_cpu() ? (VkDeviceSize{64} << 20) : (VkDeviceSize{256} << 20);
  self.flush = std::make_unique<VulkanBuffer>(*self.context, flush_bytes, kVulkanDeviceLocal);
}

VulkanBackend::~VulkanBackend() = default;

const DeviceInfo& VulkanBackend::device() const { return impl_->context->info(); }
bool VulkanBackend::healthy() const { return impl_->healthy; }
void VulkanBackend::prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
  impl_->problem_state(family, problem, seed);
}

// A variant's compute pipeline over the problem's bindings, with the command buffer that times
// it. A batch of n samples is one command buffer, submitted once and waited for once:
//
//   t[0]  { [evict]  t[2i+1]  dispatch i  t[2i+2] }  for i < n
//
// Every timestamp is taken at the bottom of the pipe: t[2i+1] once sample i's eviction has
// finished, t[2i+2] once its dispatch has. t[2i+1] - t[2i] is the time between samples (the
// eviction), t[2i+2] - t[2i+1] the sample. A barrier between samples keeps the next sample's
// eviction and dispatch from starting before the previous dispatch finishes: samples never
// overlap, and each one runs as it did when every sample was a submit of its own.
class VulkanVariant final : public LoadedVariant {
 public:
  VulkanVariant(VulkanBackend::Impl& backend, VulkanBackend::Impl::ProblemState& state, const Problem& problem,
                std::unique_ptr<VulkanPipeline> pipeline, const WorkgroupGeometry& geometry)
      : backend_(backend),
        state_(state),
        problem_(problem),
        pipeline_(std::move(pipeline)),
        geometry_(geometry),
        timing_(std::make_unique<VulkanSubmitter>(*backend.context)) {}

  // Outputs poisoned (all-ones bytes are NaN in every float format), then one dispatch.
  void run_poisoned() override {
    VulkanLibrary& vk = VulkanLibrary::get();
    backend_.submit([&](VkCommandBuffer c) {
      for (std::size_t t = 0; t < state_.specs.size(); ++t)
        if (state_.specs[t].is_output)
          vk.vkCmdFillBuffer(c, state_.buffers[t]->buffer, 0, VK_WHOLE_SIZE, 0xFFFFFFFFu);
      vulkan_barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      dispatch(c);
    });
  }

  // Every output copied into the staging buffer, which nothing else uses while the variant is timed.
  std::vector<OutputCopy> read_outputs() override {
    VulkanLibrary& vk = VulkanLibrary::get();
    VkDeviceSize read_bytes = 0;
    for (std::size_t t = 0; t < state_.specs.size(); ++t)
      if (state_.specs[t].is_output) read_bytes += state_.buffers[t]->bytes;
    VulkanBuffer& readback = backend_.staging_of(read_bytes);
    backend_.submit([&](VkCommandBuffer c) {
      vulkan_barrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_TRANSFER_READ_BIT);
      VkDeviceSize offset = 0;
      for (std::size_t t = 0; t < state_.specs.size(); ++t) {
        if (!state_.specs[t].is_output) continue;
        VkBufferCopy region{0, offset, state_.buffers[t]->bytes};
        vk.vkCmdCopyBuffer(c, state_.buffers[t]->buffer, readback.buffer, 1, &region);
        offset += state_.buffers[t]->bytes;
      }
      vulkan_barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                     VK_ACCESS_HOST_READ_BIT);
    });
    std::vector<OutputCopy> copies;
    VkDeviceSize offset = 0;
    for (std::size_t t = 0; t < state_.specs.size(); ++t) {
      if (!state_.specs[t].is_output) continue;
      copies.push_back({static_cast<const char*>(readback.mapped) + offset, state_.buffers[t]->bytes,
                        state_.specs[t].precision(problem_), state_.expected[t]});
      offset += state_.buffers[t]->bytes;
    }
    return copies;
  }

  // `runs` dispatches, one submit each; then, on a GPU, dispatches until its clocks are up.
  void warm_up(int runs) override {
    auto dispatch_into = [this](VkCommandBuffer c) { dispatch(c); };
    for (int i = 0; i < runs; ++i) backend_.submit(dispatch_into);
    if (!backend_.context->is_cpu()) backend_.warm_up_clocks(dispatch_into);
  }

  SampleBatch time(std::size_t count, bool flush) override {
    const auto stamps = static_cast<std::uint32_t>(2 * count + 1);
    const VkQueryPool pool = backend_.query_pool(stamps);
    if (!recorded_ || recorded_->count != count || recorded_->flush != flush || recorded_->pool != pool)
      record(count, flush, pool);
    timing_->run_recorded();
    std::vector<std::uint64_t> ticks(stamps);
    KT_VK(vkGetQueryPoolResults(backend_.device(), pool, 0, stamps, ticks.size() * sizeof(std::uint64_t), ticks.data(),
                                sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    const std::uint32_t bits = backend_.context->timestamp_valid_bits();
    const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    const double period_ns = backend_.context->timestamp_period_ns();
    auto elapsed_ns = [&](std::size_t from) {
      return static_cast<double>((ticks[from + 1] - ticks[from]) & mask) * period_ns;
    };
    SampleBatch batch;
    batch.kernel_ns.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      batch.between_ns += elapsed_ns(2 * i);
      batch.kernel_ns.push_back(elapsed_ns(2 * i + 1));
    }
    return batch;
  }

  // The shader runs on the host's cores on a CPU device (lavapipe): outputs are compared first.
  bool host_idle_while_timing() const override { return !backend_.context->is_cpu(); }

 private:
  void dispatch(VkCommandBuffer c) const {
    record_dispatch(c, pipeline_->pipeline, *state_.bindings, state_.push_constants, geometry_);
  }

  // Records `count` samples (see the class comment) into the timing command buffer, submitted as
  // is for every batch of that size.
  void record(std::size_t count, bool flush, VkQueryPool pool) {
    VulkanLibrary& vk = VulkanLibrary::get();
    recorded_.reset();
    const auto stamps = static_cast<std::uint32_t>(2 * count + 1);
    const VkCommandBuffer c = timing_->commands();
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    KT_VK(vkBeginCommandBuffer(c, &begin));
    vk.vkCmdResetQueryPool(c, pool, 0, stamps);
    vk.vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 0);
    for (std::size_t i = 0; i < count; ++i) {
      if (i > 0)  // the previous sample's dispatch finishes first (its outputs are written again)
        vulkan_barrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      if (flush) {
        vk.vkCmdFillBuffer(c, backend_.flush->buffer, 0, VK_WHOLE_SIZE, 0);
        vulkan_barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
      }
      vk.vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, static_cast<std::uint32_t>(2 * i + 1));
      dispatch(c);
      vk.vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, static_cast<std::uint32_t>(2 * i + 2));
    }
    KT_VK(vkEndCommandBuffer(c));
    recorded_ = Recorded{count, flush, pool};
  }

  struct Recorded {
    std::size_t count;
    bool flush;
    VkQueryPool pool;
  };

  VulkanBackend::Impl& backend_;
  VulkanBackend::Impl::ProblemState& state_;
  const Problem& problem_;
  std::unique_ptr<VulkanPipeline> pipeline_;
  WorkgroupGeometry geometry_;
  std::unique_ptr<VulkanSubmitter> timing_;  // released before the pipeline its commands use
  std::optional<Recorded> recorded_;         // what the timing command buffer holds
};

std::optional<DeviceFault> VulkanBackend::Impl::fault(std::exception_ptr error, MeasurePhase) const {
  try {
    std::rethrow_exception(error);
  } catch (const VulkanError& e) {
    // A lost device (a crashed or hung shader) takes the worker with it. Any other Vulkan error,
    // in the first run as later, is the harness's.
    if (e.sticky()) return DeviceFault{Outcome::crashed, e.what(), true};
    return std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

std::unique_ptr<LoadedVariant> VulkanBackend::Impl::load(const KernelFamily& family, const Problem& problem,
                                                          const Config& config, const VariantBuild& build,
                                                          EvaluationResult& result) {
  VariantBuild variant = build;
  if (variant.binary.empty()) {
    // Not built by the tuner: the build-time module of the precision (no compile-time parameters).
    const BuiltVariant built = build_vulkan_variant(family, problem, Config{}, default_binary_cache_dir());
    if (!built.ok) {
      result.outcome = Outcome::compile_error;
      result.message = built.log;
      return nullptr;
    }
    variant.binary = built.build.binary;
  }
  ProblemState& problem_state = *state;
  if (!problem_state.unsupported.empty()) {
    result.outcome = Outcome::unsupported;
    result.message = problem_state.unsupported;
    return nullptr;
  }
  const WorkgroupGeometry geometry = workgroup_geometry(variant.launch);
  if (const std::string refusal = launch_refusal(context->info(), geometry); !refusal.empty()) {
    result.outcome = Outcome::unsupported;
    result.message = refusal;
    return nullptr;
  }

  // Specialization constants: the workgroup size by id, every other by name.
  try {
    load_module(variant.binary);
  } catch (const VulkanError& e) {
    if (e.sticky()) throw;
    result.outcome = Outcome::compile_error;
    result.message = std::string("the driver refused the SPIR-V module: ") + e.what();
    return nullptr;
  }
  const Specialization specialization = specialization_for(constants, geometry, config, problem);
  if (!specialization.refusal.empty()) {
    result.outcome = specialization.unmatched ? Outcome::compile_error : Outcome::unsupported;
    result.message = specialization.refusal;
    return nullptr;
  }
  const VkPipelineCreateFlags flags =
      context->captures_pipeline_statistics() ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0;
  auto pipeline =
      std::make_unique<VulkanPipeline>(device(), module, specialization, problem_state.bindings->pipeline_layout(), flags);
  if (pipeline->result != VK_SUCCESS) {
    result.outcome = Outcome::compile_error;
    result.message = std::string("vkCreateComputePipelines failed: ") + vk_result_name(pipeline->result);
    return nullptr;
  }
  if (context->captures_pipeline_statistics())
    result.environment["pipeline"] = context->pipeline_statistics(pipeline->pipeline);
  result.environment["flush_bytes"] = flush->bytes;
  return std::make_unique<VulkanVariant>(*this, problem_state, problem, std::move(pipeline), geometry);
}

EvaluationResult VulkanBackend::evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                                         const VariantBuild& build, const MeasureSettings& settings) {
  return measure_variant(*impl_, family, problem, config, build, settings, impl_->healthy);
}

}  // namespace ktune
