#include "tuner/backends/cuda/nvrtc_compiler.hpp"

#include <nvrtc.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "tuner/backends/gpu_source.hpp"
#include "tuner/core/errors.hpp"

#ifndef KTUNE_CUDA_INCLUDE_DIR
#error "KTUNE_CUDA_INCLUDE_DIR must name the CUDA toolkit's include directory"
#endif

namespace ktune {
namespace {

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
  if (!std::regex_match(arch_, std::regex("sm_[0-9]{2,3}[af]?|compute_[0-9]{2,3}")))
    throw InputError("--arch: '" + arch_ + "' is not a CUDA architecture such as sm_80, sm_90a or sm_100a "
                     "(or compute_80 for PTX)");
  // An architecture this NVRTC cannot target fails here, once, not in every variant's log.
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    std::vector<int> supported(static_cast<std::size_t>(count));
    if (nvrtcGetSupportedArchs(supported.data()) == NVRTC_SUCCESS) {
      const int number = std::stoi(arch_.substr(arch_.find('_') + 1));
      if (std::find(supported.begin(), supported.end(), number) == supported.end()) {
        std::vector<std::string> names;
        for (int value : supported) names.push_back("sm_" + std::to_string(value));
        throw InputError("--arch: NVRTC " + nvrtc_version() + " cannot compile for " + arch_ + "; it supports " +
                         join_names(names) + " (and the a/f variants of those that have them, e.g. sm_90a)");
      }
    }
  }
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

std::filesystem::path NvrtcCompiler::default_cache_dir() { return default_binary_cache_dir(); }

std::string NvrtcCompiler::source_hash(const KernelFamily& family) {
  const GpuSource* source = family.cuda_source();
  if (!source) throw InputError("kernel '" + family.name() + "' has no CUDA implementation");
  return gpu_source_hash(*source);
}

std::vector<std::string> NvrtcCompiler::options(const KernelFamily& family, const Problem& problem,
                                                const Config& config) const {
  std::vector<std::string> options{"--gpu-architecture=" + arch_, "-std=c++17", "-I" + cuda_include_dir()};
  if (fast_check_) options.push_back("--Ofast-compile=mid");
  const std::vector<Precision> supported{Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16,
                                         Precision::fp8_e4m3};
  for (auto& define : variant_defines(family, problem, config, supported, "CUDA")) options.push_back(std::move(define));
  const GpuSource* source = family.cuda_source();
  if (source && source->raw_defines)
    for (const auto& option : family.cuda_compiler_options()) options.push_back(option);
  return options;
}

CompiledVariant NvrtcCompiler::compile(const KernelFamily& family, const Problem& problem, const Config& config) const {
  const GpuSource* source = family.cuda_source();
  if (!source) throw InputError("kernel '" + family.name() + "' has no CUDA implementation");
  const std::string main_text = gpu_main_text(*source);

  CompiledVariant variant;
  variant.entry = std::string(source->entry);
  const auto options = this->options(family, problem, config);
  std::string key_text = source_hash(family) + "|" + nvrtc_version() + "|" + variant.entry;
  for (const auto& option : options) key_text += "|" + option;
  // A virtual architecture (compute_80) gives PTX, which the driver compiles for the GPU it
  // loads on; a real one (sm_90a) gives CUBIN.
  const bool ptx = arch_.rfind("compute_", 0) == 0;
  variant.cubin_path = cache_dir_ / (family.name() + "-" + hex16(fnv1a(key_text)) + (ptx ? ".ptx" : ".cubin"));
  // A raw source's entry is a name expression; its symbol is kept beside the binary.
  const bool name_expression = source->raw_defines;
  if (std::filesystem::exists(variant.cubin_path)) {
    const auto lowered = name_expression ? cached_entry_name(variant.cubin_path) : std::optional<std::string>(variant.entry);
    if (lowered) {
      variant.entry = *lowered;
      variant.ok = true;
      variant.cached = true;
      return variant;
    }
  }

  const auto start = std::chrono::steady_clock::now();
  const EmbeddedHeaders headers;
  nvrtcProgram program;
  KT_NVRTC(nvrtcCreateProgram(&program, main_text.c_str(), std::string(source->file).c_str(),
                              static_cast<int>(headers.texts.size()), headers.texts.data(), headers.names.data()));
  std::vector<const char*> option_ptrs;
  for (const auto& option : options) option_ptrs.push_back(option.c_str());
  if (name_expression) KT_NVRTC(nvrtcAddNameExpression(program, variant.entry.c_str()));
  const nvrtcResult compiled = nvrtcCompileProgram(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 1) nvrtcGetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  variant.log = log;
  if (compiled == NVRTC_SUCCESS) {
    std::size_t size = 0;
    KT_NVRTC(ptx ? nvrtcGetPTXSize(program, &size) : nvrtcGetCUBINSize(program, &size));
    std::string binary(size, '\0');  // PTX's size counts its terminating null, which the driver needs
    KT_NVRTC(ptx ? nvrtcGetPTX(program, binary.data()) : nvrtcGetCUBIN(program, binary.data()));
    const char* lowered = nullptr;
    const nvrtcResult named =
        name_expression ? nvrtcGetLoweredName(program, variant.entry.c_str(), &lowered) : NVRTC_SUCCESS;
    if (named != NVRTC_SUCCESS) {
      variant.log = "the kernel name '" + variant.entry + "' names no __global__ function of " +
                    std::string(source->file) + " (nvrtcGetLoweredName: " + nvrtcGetErrorString(named) + ")";
    } else {
      if (name_expression) {
        variant.entry = lowered;
        keep_entry_name(variant.cubin_path, variant.entry);
      }
      write_file_atomically(variant.cubin_path, binary);
      variant.ok = true;
    }
  } else {
    variant.log = std::string(nvrtcGetErrorString(compiled)) + (log.empty() ? "" : ": " + log);
  }
  nvrtcDestroyProgram(&program);
  variant.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return variant;
}

}  // namespace ktune
