// The build step of Vulkan variants: the SPIR-V module of a config, written to the binary cache
// for the worker to load. Configs reach it without their specialization-constant parameters
// (they count as launch_only), so one module serves every value of those: the build-time module
// of the precision when the config has no compile-time parameter, else glslang's.
#include <chrono>
#include <filesystem>
#include <memory>

#include "tuner/backends/compile_pool.hpp"
#include "tuner/backends/gpu_source.hpp"
#include "tuner/backends/vulkan/glslang_compiler.hpp"
#include "tuner/backends/vulkan/vulkan_backend.hpp"
#include "tuner/backends/vulkan/vulkan_shaders.hpp"

namespace ktune {
namespace {

std::string as_bytes(const std::vector<std::uint32_t>& words) {
  return std::string(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(std::uint32_t));
}

}  // namespace

BuiltVariant build_vulkan_variant(const KernelFamily& family, const Problem& problem, const Config& compile_time_config,
                                  const std::filesystem::path& cache_dir) {
  const VulkanShader* shader = family.vulkan_shader();
  BuiltVariant built;
  built.build.entry = "main";
  if (!shader) {
    built.log = "kernel '" + family.name() + "' has no Vulkan shader";
    return built;
  }
  const std::vector<std::string> defines = vulkan_defines(problem, compile_time_config);
  std::string key = vulkan_source_hash(family);
  for (const auto& define : defines) key += "|" + define;
  const auto directory = cache_dir / "vulkan";
  const auto path = directory / (family.name() + "-" + hex16(fnv1a(key)) + ".spv");
  built.build.binary = path.string();
  if (std::filesystem::exists(path)) {
    built.ok = true;
    return built;
  }
  std::filesystem::create_directories(directory);
  if (compile_time_config.values.empty()) {
    if (const auto* words = prebuilt_spirv(shader->file, problem.precision)) {
      write_file_atomically(path, as_bytes(*words));
      built.ok = true;
      return built;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const GlslCompileResult compiled = compile_glsl(vulkan_shader_text(shader->file), defines);
  built.build.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  built.log = compiled.log;
  if (!compiled.ok) return built;
  write_file_atomically(path, as_bytes(compiled.words));
  built.ok = true;
  return built;
}

std::unique_ptr<VariantBuilder> make_vulkan_variant_builder(const KernelFamily& family, const Problem& problem,
                                                            int threads, const std::vector<std::string>& launch_only) {
  require_vulkan_precision(problem.precision);  // InputError now, not once per config
  const std::filesystem::path cache_dir = default_binary_cache_dir();
  return make_compile_pool(
      [&family, problem, cache_dir](const Config& config) {
        return build_vulkan_variant(family, problem, config, cache_dir);
      },
      "spirv", threads, launch_only);
}

}  // namespace ktune
