#include "tuner/backends/vulkan/vulkan_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>

#include "tuner/backends/gpu_source.hpp"
#include "tuner/backends/host_problem.hpp"
#include "tuner/backends/output_check.hpp"
#include "tuner/backends/vulkan/spirv_reflection.hpp"
#include "tuner/backends/vulkan/vulkan_context.hpp"
#include "tuner/backends/vulkan/vulkan_dispatch.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/measure/verify.hpp"

namespace ktune {

struct VulkanBackend::Impl {
  std::unique_ptr<VulkanContext> context;
  bool healthy = true;
  std::unique_ptr<VulkanSubmitter> submitter;
  VkQueryPool queries = VK_NULL_HANDLE;
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

  VkDevice device() const { return context->device(); }

  // Records commands with `record`, submits them and waits for the device to finish them.
  template <typename Record>
  void submit(Record record) {
    submitter->submit(record);
  }
  // Submits the command buffer as recorded and waits for it.
  void run_recorded() { submitter->run_recorded(); }

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

  ProblemState& prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
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
  VkQueryPoolCreateInfo queries{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  queries.queryType = VK_QUERY_TYPE_TIMESTAMP;
  queries.queryCount = 2;
  KT_VK(vkCreateQueryPool(self.device(), &queries, nullptr, &self.queries));
  // Larger than any GPU's last-level cache (the H200's L2 is 60 MB); a CPU device (lavapipe)
  // gets a smaller one, as filling it is slow there.
  const VkDeviceSize flush_bytes = self.context->is_cpu() ? (VkDeviceSize{64} << 20) : (VkDeviceSize{256} << 20);
  self.flush = std::make_unique<VulkanBuffer>(*self.context, flush_bytes, kVulkanDeviceLocal);
}

VulkanBackend::~VulkanBackend() = default;

const DeviceInfo& VulkanBackend::device() const { return impl_->context->info(); }
bool VulkanBackend::healthy() const { return impl_->healthy; }
void VulkanBackend::prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
  impl_->prepare_problem(family, problem, seed);
}

EvaluationResult VulkanBackend::evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                                         const VariantBuild& build, const MeasureSettings& settings) {
  Impl& self = *impl_;
  VulkanLibrary& vk = VulkanLibrary::get();
  EvaluationResult result;
  result.compile_ms = build.compile_ms;
  VariantBuild variant = build;
  if (variant.binary.empty()) {
    // Not built by the tuner: the build-time module of the precision (no compile-time parameters).
    const BuiltVariant built = build_vulkan_variant(family, problem, Config{}, default_binary_cache_dir());
    if (!built.ok) {
      result.outcome = Outcome::compile_error;
      result.message = built.log;
      return result;
    }
    variant.binary = built.build.binary;
  }

  try {
    Impl::ProblemState& state = self.prepare_problem(family, problem, settings.seed);
    if (!state.unsupported.empty()) {
      result.outcome = Outcome::unsupported;
      result.message = state.unsupported;
      return result;
    }
    const WorkgroupGeometry geometry = workgroup_geometry(variant.launch);
    if (const std::string refusal = launch_refusal(self.context->info(), geometry); !refusal.empty()) {
      result.outcome = Outcome::unsupported;
      result.message = refusal;
      return result;
    }

    // Specialization constants: the workgroup size by id, every other by name.
    try {
      self.load_module(variant.binary);
    } catch (const VulkanError& e) {
      if (e.sticky()) throw;
      result.outcome = Outcome::compile_error;
      result.message = std::string("the driver refused the SPIR-V module: ") + e.what();
      return result;
    }
    const Specialization specialization = specialization_for(self.constants, geometry, config, problem);
    if (!specialization.refusal.empty()) {
      result.outcome = specialization.unmatched ? Outcome::compile_error : Outcome::unsupported;
      result.message = specialization.refusal;
      return result;
    }
    const VkPipelineCreateFlags flags =
        self.context->captures_pipeline_statistics() ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0;
    VulkanPipeline pipeline(self.device(), self.module, specialization, state.bindings->pipeline_layout(), flags);
    if (pipeline.result != VK_SUCCESS) {
      result.outcome = Outcome::compile_error;
      result.message = std::string("vkCreateComputePipelines failed: ") + vk_result_name(pipeline.result);
      return result;
    }
    if (self.context->captures_pipeline_statistics())
      result.environment["pipeline"] = self.context->pipeline_statistics(pipeline.pipeline);

    auto dispatch = [&](VkCommandBuffer c) {
      record_dispatch(c, pipeline.pipeline, *state.bindings, state.push_constants, geometry);
    };

    // Verification on poisoned outputs (all-ones bytes are NaN in every float format), read back
    // through the staging buffer.
    std::vector<std::size_t> outputs_at;
    VkDeviceSize read_bytes = 0;
    for (std::size_t t = 0; t < state.specs.size(); ++t)
      if (state.specs[t].is_output) {
        outputs_at.push_back(t);
        read_bytes += state.buffers[t]->bytes;
      }
    VulkanBuffer& readback = self.staging_of(read_bytes);
    self.submit([&](VkCommandBuffer c) {
      for (std::size_t t : outputs_at) vk.vkCmdFillBuffer(c, state.buffers[t]->buffer, 0, VK_WHOLE_SIZE, 0xFFFFFFFFu);
      vulkan_barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      dispatch(c);
      vulkan_barrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
              VK_ACCESS_TRANSFER_READ_BIT);
      VkDeviceSize offset = 0;
      for (std::size_t t : outputs_at) {
        VkBufferCopy region{0, offset, state.buffers[t]->bytes};
        vk.vkCmdCopyBuffer(c, state.buffers[t]->buffer, readback.buffer, 1, &region);
        offset += state.buffers[t]->bytes;
      }
    });
    std::vector<StoredOutput> outputs;
    VkDeviceSize offset = 0;
    for (std::size_t t : outputs_at) {
      outputs.push_back({static_cast<const char*>(readback.mapped) + offset, state.specs[t].precision(problem),
                         state.expected[t]});
      offset += state.buffers[t]->bytes;
    }
    const bool verifies = family.verifies(problem);
    const OutputCheck check = verifies ? check_outputs(family, problem, outputs) : OutputCheck{-1.0, Verdict{true, ""}};
    result.error = check.error;
    const Verdict verdict = check.verdict;
    if (!verdict.passed) {
      result.outcome = Outcome::wrong_result;
      result.message = verdict.message;
      return result;
    }

    for (int i = 0; i < settings.warmup_runs; ++i) self.submit(dispatch);
    if (!self.context->is_cpu()) self.warm_up_clocks(dispatch);

    // One sample: [evict caches], timestamp, dispatch, timestamp. Recorded once, submitted per
    // sample. Both timestamps are taken at the bottom of the pipe: the first once the eviction
    // has finished, the second once the dispatch has.
    const bool flush = family.memory_bound();
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    const VkCommandBuffer c = self.submitter->commands();
    KT_VK(vkBeginCommandBuffer(c, &begin));
    vk.vkCmdResetQueryPool(c, self.queries, 0, 2);
    if (flush) {
      vk.vkCmdFillBuffer(c, self.flush->buffer, 0, VK_WHOLE_SIZE, 0);
      vulkan_barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT);
    }
    vk.vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, self.queries, 0);
    dispatch(c);
    vk.vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, self.queries, 1);
    KT_VK(vkEndCommandBuffer(c));
    const std::uint32_t bits = self.context->timestamp_valid_bits();
    const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    StoppingRule rule(settings.stopping);
    while (!rule.done()) {
      self.run_recorded();
      std::uint64_t stamps[2] = {};
      KT_VK(vkGetQueryPoolResults(self.device(), self.queries, 0, 2, sizeof stamps, stamps, sizeof(std::uint64_t),
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
      const double ns = static_cast<double>((stamps[1] - stamps[0]) & mask) * self.context->timestamp_period_ns();
      result.samples_ns.push_back(ns);
      rule.add(ns);
    }
    result.environment["l2_flushed"] = flush;
    result.environment["flush_bytes"] = self.flush->bytes;
    result.stats = summarize(result.samples_ns);
    result.outcome = Outcome::ok;
    result.message = verdict.message + "; " + rule.reason();
    return result;
  } catch (const VulkanError& e) {
    // A lost device (a crashed or hung shader) takes the worker with it.
    if (!e.sticky()) throw;
    self.healthy = false;
    result.outcome = Outcome::crashed;
    result.message = e.what();
    result.samples_ns.clear();
    return result;
  }
}

}  // namespace ktune
