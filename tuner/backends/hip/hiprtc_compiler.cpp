#include "tuner/backends/hip/hiprtc_compiler.hpp"

#include "tuner/backends/hip/hip_device.hpp"

#include <chrono>
#include <mutex>
#include <regex>

#include "tuner/backends/gpu_source.hpp"
#include "tuner/backends/hip/hip_library.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// hiprtc 5.2 is not reliable from several threads at once: with two compiles in flight, a long
// check run had failures in 5 of 22 family/target runs that all passed when compiled again alone.
std::mutex& hiprtc_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::string program_log(const HipLibrary& rtc, hiprtcProgram program) {
  std::size_t size = 0;
  rtc.hiprtcGetProgramLogSize(program, &size);
  std::string log(size, '\0');
  if (size > 1) rtc.hiprtcGetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

bool HiprtcCompiler::valid_arch(const std::string& arch) { return valid_hip_arch(arch); }

HiprtcCompiler::HiprtcCompiler(std::string arch, std::filesystem::path cache_dir, bool fast_check)
    : arch_(arch.substr(0, arch.find(':'))), cache_dir_(std::move(cache_dir)), fast_check_(fast_check) {
  if (!valid_arch(arch_))
    throw InputError("--arch: '" + arch + "' is not an AMD GPU target such as gfx90a, gfx940 or gfx1030");
  HipLibrary::compiler();  // BackendUnavailable, saying what is missing, without hiprtc
  std::error_code error;
  std::filesystem::create_directories(cache_dir_, error);
  if (error)
    throw InputError(cache_dir_.string() + ": cannot create the code object cache directory (" + error.message() + ")");
}

std::string HiprtcCompiler::hiprtc_version() {
  int major = 0, minor = 0;
  HipLibrary::compiler().hiprtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string HiprtcCompiler::source_hash(const KernelFamily& family) {
  const GpuSource* source = family.hip_source();
  if (!source) throw InputError("kernel '" + family.name() + "' has no HIP implementation");
  return gpu_source_hash(*source);
}

std::vector<std::string> HiprtcCompiler::options(const KernelFamily& family, const Problem& problem,
                                                 const Config& config) const {
  std::vector<std::string> options{"--offload-arch=" + arch_, fast_check_ ? "-O0" : "-O3", "-std=c++17"};
  // fp8 needs conversions the AMD targets of hiprtc 5.2 lack; tf32 is an NVIDIA tensor-core format.
  const std::vector<Precision> supported{Precision::fp32, Precision::fp16, Precision::bf16};
  for (auto& define : variant_defines(family, problem, config, supported, "HIP")) options.push_back(std::move(define));
  for (const auto& option : family.hip_compiler_options()) options.push_back(option);
  return options;
}

CompiledHipVariant HiprtcCompiler::compile(const KernelFamily& family, const Problem& problem,
                                           const Config& config) const {
  const GpuSource* source = family.hip_source();
  if (!source) throw InputError("kernel '" + family.name() + "' has no HIP implementation");
  const std::string main_text = gpu_main_text(*source);
  CompiledHipVariant variant;
  variant.entry = std::string(source->entry);
  const auto options = this->options(family, problem, config);
  std::string key_text = source_hash(family) + "|hiprtc " + hiprtc_version() + "|" + variant.entry;
  for (const auto& option : options) key_text += "|" + option;
  variant.code_path = cache_dir_ / (family.name() + "-" + hex16(fnv1a(key_text)) + ".hsaco");
  // A raw source's entry is a name expression; its symbol is kept beside the code object.
  const bool name_expression = source->raw_defines;
  if (std::filesystem::exists(variant.code_path)) {
    const auto lowered = name_expression ? cached_entry_name(variant.code_path) : std::optional<std::string>(variant.entry);
    if (lowered) {
      variant.entry = *lowered;
      variant.ok = true;
      return variant;
    }
  }

  const HipLibrary& rtc = HipLibrary::compiler();
  EmbeddedHeaders headers;  // hiprtc takes the arrays as non-const
  std::vector<const char*> option_ptrs;
  for (const auto& option : options) option_ptrs.push_back(option.c_str());
  std::lock_guard lock(hiprtc_mutex());
  const auto start = std::chrono::steady_clock::now();
  hiprtcProgram program = nullptr;
  hiprtcResult status = rtc.hiprtcCreateProgram(&program, main_text.c_str(), std::string(source->file).c_str(),
                                                static_cast<int>(headers.texts.size()), headers.texts.data(),
                                                headers.names.data());
  if (status != HIPRTC_SUCCESS) {
    variant.log = std::string("hiprtcCreateProgram: ") + rtc.hiprtcGetErrorString(status);
    return variant;
  }
  if (name_expression) status = rtc.hiprtcAddNameExpression(program, variant.entry.c_str());
  if (status == HIPRTC_SUCCESS)
    status = rtc.hiprtcCompileProgram(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  const std::string log = program_log(rtc, program);
  if (status == HIPRTC_SUCCESS) {
    std::size_t size = 0;
    rtc.hiprtcGetCodeSize(program, &size);
    std::string code(size, '\0');
    status = rtc.hiprtcGetCode(program, code.data());
    const char* lowered = nullptr;
    if (status == HIPRTC_SUCCESS && name_expression) {
      status = rtc.hiprtcGetLoweredName(program, variant.entry.c_str(), &lowered);
      if (status == HIPRTC_SUCCESS) {
        variant.entry = lowered;
        keep_entry_name(variant.code_path, variant.entry);
      }
    }
    if (status == HIPRTC_SUCCESS && size > 0) {
      write_file_atomically(variant.code_path, code);
      variant.ok = true;
      variant.log = log;
    } else {
      variant.log = std::string(name_expression ? "hiprtcGetCode or hiprtcGetLoweredName(" + variant.entry + ")"
                                                : std::string("hiprtcGetCode")) +
                    ": " + rtc.hiprtcGetErrorString(status);
    }
  } else {
    variant.log = std::string(rtc.hiprtcGetErrorString(status)) + (log.empty() ? "" : ": " + log);
  }
  rtc.hiprtcDestroyProgram(&program);
  variant.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return variant;
}

}  // namespace ktune
