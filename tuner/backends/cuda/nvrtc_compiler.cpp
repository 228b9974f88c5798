#include "tuner/backends/cuda/nvrtc_compiler.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>

#include "tuner/backends/cuda/nvrtc_library.hpp"
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

// A virtual architecture (compute_80) gives PTX; a real one (sm_90a) gives CUBIN.
bool is_virtual(const std::string& arch) { return arch.rfind("compute_", 0) == 0; }

// `arch` checked against what this NVRTC can target (once, not in every variant's log).
CompilerTarget nvrtc_target(std::string arch, bool fast_check) {
  if (!std::regex_match(arch, std::regex("sm_[0-9]{2,3}[af]?|compute_[0-9]{2,3}")))
    throw InputError("--arch: '" + arch + "' is not a CUDA architecture such as sm_80, sm_90a or sm_100a "
                     "(or compute_80 for PTX)");
  const NvrtcLibrary& rtc = NvrtcLibrary::get();  // BackendUnavailable, saying what is missing, without NVRTC
  int count = 0;
  if (rtc.nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    std::vector<int> supported(static_cast<std::size_t>(count));
    if (rtc.nvrtcGetSupportedArchs(supported.data()) == NVRTC_SUCCESS) {
      const int number = std::stoi(arch.substr(arch.find('_') + 1));
      if (std::find(supported.begin(), supported.end(), number) == supported.end()) {
        std::vector<std::string> names;
        for (int value : supported) names.push_back("sm_" + std::to_string(value));
        throw InputError("--arch: NVRTC " + NvrtcCompiler::nvrtc_version() + " cannot compile for " + arch +
                         "; it supports " + join_names(names) +
                         " (and the a/f variants of those that have them, e.g. sm_90a)");
      }
    }
  }
  int major = 0, minor = 0;
  rtc.nvrtcVersion(&major, &minor);
  if (fast_check && major * 100 + minor < 1208)
    throw BackendUnavailable("--fast-compile needs NVRTC 12.8 or newer (its --Ofast-compile); this is NVRTC " +
                             NvrtcCompiler::nvrtc_version());
  CompilerTarget target;
  target.api = GpuApi::cuda;
  target.identity = NvrtcCompiler::nvrtc_version();
  target.options = {"--gpu-architecture=" + arch, "-std=c++17", "-I" + cuda_include_dir()};
  if (fast_check) target.options.push_back("--Ofast-compile=mid");
  target.precisions = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8_e4m3};
  target.extension = is_virtual(arch) ? ".ptx" : ".cubin";
  target.binary_kind = "CUBIN";
  target.arch = std::move(arch);
  return target;
}

std::string program_log(const NvrtcLibrary& rtc, nvrtcProgram program) {
  std::size_t size = 0;
  rtc.nvrtcGetProgramLogSize(program, &size);
  std::string log(size, '\0');
  if (size > 1) rtc.nvrtcGetProgramLog(program, log.data());
  return log;
}

}  // namespace

NvrtcCompiler::NvrtcCompiler(std::string arch, std::filesystem::path cache_dir, bool fast_check)
    : RuntimeCompiler(nvrtc_target(arch, fast_check), std::move(cache_dir)), ptx_(is_virtual(arch)) {}

std::string NvrtcCompiler::nvrtc_version() {
  int major = 0, minor = 0;
  NvrtcLibrary::get().nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

ProgramOutput NvrtcCompiler::translate(const RuntimeProgram& program) const {
  const NvrtcLibrary& rtc = NvrtcLibrary::get();
  ProgramOutput output;
  nvrtcProgram handle = nullptr;
  nvrtcResult status =
      rtc.nvrtcCreateProgram(&handle, program.text, program.file, static_cast<int>(program.headers.texts.size()),
                         program.headers.texts.data(), program.headers.names.data());
  if (status != NVRTC_SUCCESS) {
    output.error = std::string("nvrtcCreateProgram: ") + rtc.nvrtcGetErrorString(status);
    return output;
  }
  if (program.name_expression) status = rtc.nvrtcAddNameExpression(handle, program.entry.c_str());
  if (status == NVRTC_SUCCESS)
    status = rtc.nvrtcCompileProgram(handle, static_cast<int>(program.options.size()), program.options.data());
  output.log = program_log(rtc, handle);
  if (status != NVRTC_SUCCESS) {
    output.error = rtc.nvrtcGetErrorString(status);
  } else {
    std::size_t size = 0;
    status = ptx_ ? rtc.nvrtcGetPTXSize(handle, &size) : rtc.nvrtcGetCUBINSize(handle, &size);
    output.binary.resize(size);  // PTX's size counts its terminating null, which the driver needs
    if (status == NVRTC_SUCCESS)
      status = ptx_ ? rtc.nvrtcGetPTX(handle, output.binary.data()) : rtc.nvrtcGetCUBIN(handle, output.binary.data());
    if (status != NVRTC_SUCCESS)
      output.error = std::string(ptx_ ? "nvrtcGetPTX: " : "nvrtcGetCUBIN: ") + rtc.nvrtcGetErrorString(status);
  }
  if (output.error.empty() && program.name_expression) {
    const char* lowered = nullptr;
    status = rtc.nvrtcGetLoweredName(handle, program.entry.c_str(), &lowered);
    if (status == NVRTC_SUCCESS)
      output.entry = lowered;
    else
      output.error = "the kernel name '" + program.entry + "' names no __global__ function of " + program.file +
                     " (nvrtcGetLoweredName: " + rtc.nvrtcGetErrorString(status) + ")";
  }
  rtc.nvrtcDestroyProgram(&handle);
  return output;
}

}  // namespace ktune
