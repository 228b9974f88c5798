#include "tuner/backends/runtime_compiler.hpp"

#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>

#include "tuner/backends/compile_pool.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

const GpuSource* source_for(const KernelFamily& family, GpuApi api) {
  return api == GpuApi::cuda ? family.cuda_source() : family.hip_source();
}

std::vector<std::string> own_options(const KernelFamily& family, GpuApi api) {
  return api == GpuApi::cuda ? family.cuda_compiler_options() : family.hip_compiler_options();
}

// Without the trailing nulls and newlines the compilers leave.
std::string trimmed(std::string log) {
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

const char* gpu_api_name(GpuApi api) { return api == GpuApi::cuda ? "CUDA" : "HIP"; }

RuntimeCompiler::RuntimeCompiler(CompilerTarget target, std::filesystem::path cache_dir)
    : target_(std::move(target)), cache_dir_(std::move(cache_dir)) {
  std::error_code error;
  std::filesystem::create_directories(cache_dir_, error);
  if (error)
    throw InputError(cache_dir_.string() + ": cannot create the " + target_.binary_kind + " cache directory (" +
                     error.message() + ")");
}

const GpuSource& RuntimeCompiler::source(const KernelFamily& family, GpuApi api) {
  const GpuSource* source = source_for(family, api);
  if (!source) throw InputError("kernel '" + family.name() + "' has no " + gpu_api_name(api) + " implementation");
  return *source;
}

std::string RuntimeCompiler::source_hash(const KernelFamily& family, GpuApi api) {
  return gpu_source_hash(source(family, api));
}

std::vector<std::string> RuntimeCompiler::options(const KernelFamily& family, const Problem& problem,
                                                  const Config& config) const {
  std::vector<std::string> options = target_.options;
  for (auto& define : variant_defines(family, problem, config, target_.precisions, gpu_api_name(target_.api)))
    options.push_back(std::move(define));
  const GpuSource* source = source_for(family, target_.api);
  if (source && source->raw_defines)
    for (auto& option : own_options(family, target_.api)) options.push_back(std::move(option));
  return options;
}

std::filesystem::path RuntimeCompiler::binary_path(const KernelFamily& family, const GpuSource& source,
                                                   const std::vector<std::string>& options) const {
  std::string key = gpu_source_hash(source) + "|" + target_.identity + "|" + std::string(source.entry);
  for (const auto& option : options) key += "|" + option;
  return cache_dir_ / (family.name() + "-" + hex16(fnv1a(key)) + target_.extension);
}

std::filesystem::path RuntimeCompiler::binary_path(const KernelFamily& family, const Problem& problem,
                                                   const Config& config) const {
  const GpuSource& source = this->source(family, target_.api);
  return binary_path(family, source, options(family, problem, config));
}

CompiledVariant RuntimeCompiler::compile(const KernelFamily& family, const Problem& problem,
                                         const Config& config) const {
  const GpuSource& source = this->source(family, target_.api);
  const std::string main_text = gpu_main_text(source);
  const std::vector<std::string> options = this->options(family, problem, config);

  CompiledVariant variant;
  variant.entry = std::string(source.entry);
  variant.binary_path = binary_path(family, source, options);
  // A raw source's entry is a name expression; its symbol is kept beside the binary.
  const bool name_expression = source.raw_defines;
  if (std::filesystem::exists(variant.binary_path)) {
    const auto lowered =
        name_expression ? cached_entry_name(variant.binary_path) : std::optional<std::string>(variant.entry);
    if (lowered) {
      variant.entry = *lowered;
      variant.ok = true;
      variant.cached = true;
      return variant;
    }
  }

  EmbeddedHeaders headers;
  const std::string file(source.file);
  RuntimeProgram program{main_text.c_str(), file.c_str(), {}, headers, variant.entry, name_expression};
  for (const auto& option : options) program.options.push_back(option.c_str());
  std::unique_lock<std::mutex> lock;
  if (target_.one_at_a_time) lock = std::unique_lock(*target_.one_at_a_time);
  const auto start = std::chrono::steady_clock::now();
  ProgramOutput output = translate(program);
  variant.log = trimmed(std::move(output.log));
  if (output.error.empty()) {
    if (name_expression) {
      variant.entry = output.entry;
      keep_entry_name(variant.binary_path, variant.entry);  // before the binary: see cached_entry_name
    }
    write_file_atomically(variant.binary_path, output.binary);
    variant.ok = true;
  } else {
    variant.log = output.error + (variant.log.empty() ? "" : ": " + variant.log);
  }
  variant.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return variant;
}

std::unique_ptr<VariantBuilder> make_runtime_variant_builder(std::shared_ptr<const RuntimeCompiler> compiler,
                                                             const KernelFamily& family, const Problem& problem,
                                                             int threads, const std::vector<std::string>& launch_only) {
  compiler->options(family, problem, Config{});  // InputError now for a precision the kernels cannot store
  const std::string arch = compiler->arch();
  return make_compile_pool(
      [&family, problem, compiler](const Config& config) {
        const CompiledVariant compiled = compiler->compile(family, problem, config);
        BuiltVariant built;
        built.ok = compiled.ok;
        built.log = compiled.log;
        built.build.binary = compiled.binary_path.string();
        built.build.entry = compiled.entry;
        built.build.compile_ms = compiled.compile_ms;
        return built;
      },
      arch, threads, launch_only);
}

bool compile_into(const RuntimeCompiler& compiler, const KernelFamily& family, const Problem& problem,
                  const Config& config, VariantBuild& build, EvaluationResult& result) {
  const CompiledVariant compiled = compiler.compile(family, problem, config);
  result.compile_ms = compiled.compile_ms;
  if (!compiled.ok) {
    result.outcome = Outcome::compile_error;
    result.message = compiled.log;
    return false;
  }
  build.binary = compiled.binary_path.string();
  build.entry = compiled.entry;
  return true;
}

std::string read_compiled_variant(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the compiled variant " + path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace ktune
