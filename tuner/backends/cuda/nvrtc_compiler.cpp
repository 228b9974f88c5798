#include "tuner/backends/cuda/nvrtc_compiler.hpp"

#include <nvrtc.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "ktune/embedded/cuda_sources.hpp"
#include "tuner/core/errors.hpp"

#ifndef KTUNE_CUDA_INCLUDE_DIR
#error "KTUNE_CUDA_INCLUDE_DIR must name the CUDA toolkit's include directory"
#endif

namespace ktune {
namespace {

// FNV-1a 64: stable across platforms and builds, for cache keys and source hashes.
std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 1469598103934665603ull) {
  for (unsigned char ch : text) hash = (hash ^ ch) * 1099511628211ull;
  return hash;
}

std::string hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

const EmbeddedFile* find_embedded(std::string_view path) {
  for (const auto& file : embedded::cuda_sources)
    if (file.path == path) return &file;
  return nullptr;
}

std::string upper(std::string text) {
  for (auto& ch : text) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return text;
}

const char* element_type(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "float";
    case Precision::tf32: return "float";  // rounded to tf32 on the host; the tensor cores read it so
    case Precision::fp16: return "kt::half";
    case Precision::bf16: return "kt::bfloat16";
    case Precision::fp8_e4m3: return "kt::fp8_e4m3";
    default: return nullptr;
  }
}

std::string cuda_include_dir() {
  const char* dir = std::getenv("KTUNE_CUDA_INCLUDE");
  return dir && *dir ? dir : KTUNE_CUDA_INCLUDE_DIR;
}

#define KT_NVRTC(call)                                                                           \
  do {                                                                                           \
    const nvrtcResult result_ = (call);                                                          \
    if (result_ != NVRTC_SUCCESS)                                                                \
      throw std::runtime_error(std::string(#call) + ": " + nvrtcGetErrorString(result_));        \
  } while (0)

}  // namespace

NvrtcCompiler::NvrtcCompiler(std::string arch, std::filesystem::path cache_dir, bool fast_check)
    : arch_(std::move(arch)), cache_dir_(std::move(cache_dir)), fast_check_(fast_check) {
  if (!std::regex_match(arch_, std::regex("sm_[0-9]{2,3}[af]?")))
    throw InputError("--arch: '" + arch_ + "' is not a CUDA architecture such as sm_80, sm_90a or sm_100a");
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  if (fast_check_ && major * 100 + minor < 1208)
    throw BackendUnavailable("--fast-compile needs NVRTC 12.8 or newer (its --Ofast-compile); this is NVRTC " +
                             nvrtc_version());
  std::error_code error;
  std::filesystem::create_directories(cache_dir_, error);
  if (error) throw InputError(cache_dir_.string() + ": cannot create the CUBIN cache directory (" + error.message() + ")");
}

std::string NvrtcCompiler::nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::filesystem::path NvrtcCompiler::default_cache_dir() {
  if (const char* dir = std::getenv("KTUNE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return std::filesystem::path(dir) / "ktune";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "ktune";
  return "/tmp/ktune-cache";
}

std::string NvrtcCompiler::source_hash(const KernelFamily& family) {
  const GpuSource* source = family.cuda_source();
  if (!source) throw InputError("kernel '" + family.name() + "' has no CUDA implementation");
  if (!source->text.empty()) return hex(fnv1a(source->text, fnv1a(source->file)));  // a file from outside ktune
  const EmbeddedFile* main = find_embedded(source->file);
  if (!main) throw std::runtime_error("CUDA source " + std::string(source->file) + " is not embedded in this build");
  // Every embedded file can be included, so all of them count: an edited shared header (say,
  // the dropout constants) must never let an old CUBIN or measurement be reused.
  std::uint64_t hash = fnv1a(main->text);
  for (const auto& file : embedded::cuda_sources) hash = fnv1a(file.text, fnv1a(file.path, hash));
  return hex(hash);
}

std::vector<std::string> NvrtcCompiler::options(const KernelFamily& family, const Problem& problem,
                                                const Config& config) const {
  const char* type = element_type(problem.precision);
  if (!type) throw InputError("CUDA kernels take fp32, tf32, fp16, bf16 or fp8_e4m3, not " + std::string(to_string(problem.precision)));
  std::vector<std::string> options{"--gpu-architecture=" + arch_, "-std=c++17", "-I" + cuda_include_dir(),
                                   "-DKT_T=" + std::string(type),
                                   "-DKT_PRECISION_" + upper(std::string(to_string(problem.precision)))};
  if (fast_check_) options.push_back("--Ofast-compile=mid");
  for (const auto& [name, value] : problem.dims) options.push_back("-DKT_DIM_" + upper(name) + "=" + std::to_string(value));
  const GpuSource* source = family.cuda_source();
  if (source && source->raw_defines) {
    // Kernel Tuner's convention: each parameter under its own name, values as they are.
    for (const auto& [name, value] : config.values) options.push_back("-D" + name + "=" + to_string(value));
    for (const auto& option : family.cuda_compiler_options()) options.push_back(option);
    return options;
  }
  for (const auto& [name, value] : config.values) {
    const auto* text = std::get_if<std::string>(&value);
    // String values become identifiers: KT_ORDER=KT_ORDER_row_major lets a kernel test them.
    options.push_back("-DKT_" + upper(name) + "=" + (text ? "KT_" + upper(name) + "_" + *text : to_string(value)));
  }
  return options;
}

CompiledVariant NvrtcCompiler::compile(const KernelFamily& family, const Problem& problem, const Config& config) const {
  const GpuSource* source = family.cuda_source();
  if (!source) throw InputError("kernel '" + family.name() + "' has no CUDA implementation");
  const EmbeddedFile* main = source->text.empty() ? find_embedded(source->file) : nullptr;
  if (source->text.empty() && !main)
    throw std::runtime_error("CUDA source " + std::string(source->file) + " is not embedded in this build");

  CompiledVariant variant;
  variant.entry = std::string(source->entry);
  const auto options = this->options(family, problem, config);
  std::string key_text = source_hash(family) + "|" + nvrtc_version() + "|" + variant.entry;
  for (const auto& option : options) key_text += "|" + option;
  variant.cubin_path = cache_dir_ / (family.name() + "-" + hex(fnv1a(key_text)) + ".cubin");
  if (std::filesystem::exists(variant.cubin_path)) {
    variant.ok = true;
    variant.cached = true;
    return variant;
  }

  const auto start = std::chrono::steady_clock::now();
  // Every embedded file is offered as a header, so `#include "kernels/common/..."` resolves.
  std::vector<const char*> header_texts, header_names;
  std::vector<std::string> texts, names;
  for (const auto& file : embedded::cuda_sources) {
    texts.emplace_back(file.text);
    names.emplace_back(file.path);
  }
  for (std::size_t i = 0; i < texts.size(); ++i) {
    header_texts.push_back(texts[i].c_str());
    header_names.push_back(names[i].c_str());
  }
  const std::string main_text(main ? main->text : source->text);
  nvrtcProgram program;
  KT_NVRTC(nvrtcCreateProgram(&program, main_text.c_str(), std::string(source->file).c_str(),
                              static_cast<int>(header_texts.size()), header_texts.data(), header_names.data()));
  std::vector<const char*> option_ptrs;
  for (const auto& option : options) option_ptrs.push_back(option.c_str());
  const nvrtcResult compiled = nvrtcCompileProgram(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 1) nvrtcGetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  variant.log = log;
  if (compiled == NVRTC_SUCCESS) {
    std::size_t size = 0;
    KT_NVRTC(nvrtcGetCUBINSize(program, &size));
    std::string cubin(size, '\0');
    KT_NVRTC(nvrtcGetCUBIN(program, cubin.data()));
    // Written under a unique name and renamed, so concurrent compiles never see half a file.
    const auto temporary = variant.cubin_path.string() + ".tmp" + std::to_string(getpid()) + "-" +
                           std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    {
      std::ofstream out(temporary, std::ios::binary);
      out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
      if (!out) throw std::runtime_error("cannot write " + temporary);
    }
    std::filesystem::rename(temporary, variant.cubin_path);
    variant.ok = true;
  } else {
    variant.log = std::string(nvrtcGetErrorString(compiled)) + (log.empty() ? "" : ": " + log);
  }
  nvrtcDestroyProgram(&program);
  variant.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return variant;
}

}  // namespace ktune
