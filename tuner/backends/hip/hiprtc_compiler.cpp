#include "tuner/backends/hip/hiprtc_compiler.hpp"

#include <mutex>

#include "tuner/backends/hip/hip_device.hpp"
#include "tuner/backends/hip/hip_library.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// hiprtc 5.2 is not reliable from several threads at once: with two compiles in flight, a long
// check run had failures in 5 of 22 family/target runs that all passed when compiled again alone.
std::mutex hiprtc_mutex;

CompilerTarget hiprtc_target(const std::string& given, bool fast_check) {
  const std::string arch = given.substr(0, given.find(':'));
  if (!valid_hip_arch(arch))
    throw InputError("--arch: '" + given + "' is not an AMD GPU target such as gfx90a, gfx940 or gfx1030");
  HipLibrary::compiler();  // BackendUnavailable, saying what is missing, without hiprtc
  CompilerTarget target;
  target.api = GpuApi::hip;
  target.arch = arch;
  target.identity = "hiprtc " + HiprtcCompiler::hiprtc_version();
  target.options = {"--offload-arch=" + arch, fast_check ? "-O0" : "-O3", "-std=c++17"};
  // fp8 needs conversions the AMD targets of hiprtc 5.2 lack; tf32 is an NVIDIA tensor-core format.
  target.precisions = {Precision::fp32, Precision::fp16, Precision::bf16};
  target.extension = ".hsaco";
  target.binary_kind = "code object";
  target.one_at_a_time = &hiprtc_mutex;
  return target;
}

std::string program_log(const HipLibrary& rtc, hiprtcProgram program) {
  std::size_t size = 0;
  rtc.hiprtcGetProgramLogSize(program, &size);
  std::string log(size, '\0');
  if (size > 1) rtc.hiprtcGetProgramLog(program, log.data());
  return log;
}

}  // namespace

HiprtcCompiler::HiprtcCompiler(std::string arch, std::filesystem::path cache_dir, bool fast_check)
    : RuntimeCompiler(hiprtc_target(arch, fast_check), std::move(cache_dir)) {}

std::string HiprtcCompiler::hiprtc_version() {
  int major = 0, minor = 0;
  HipLibrary::compiler().hiprtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

ProgramOutput HiprtcCompiler::translate(const RuntimeProgram& program) const {
  const HipLibrary& rtc = HipLibrary::compiler();
  ProgramOutput output;
  hiprtcProgram handle = nullptr;
  hiprtcResult status =
      rtc.hiprtcCreateProgram(&handle, program.text, program.file, static_cast<int>(program.headers.texts.size()),
                              program.headers.texts.data(), program.headers.names.data());
  if (status != HIPRTC_SUCCESS) {
    output.error = std::string("hiprtcCreateProgram: ") + rtc.hiprtcGetErrorString(status);
    return output;
  }
  if (program.name_expression) status = rtc.hiprtcAddNameExpression(handle, program.entry.c_str());
  std::vector<const char*> options = program.options;  // hiprtc takes the array as non-const
  if (status == HIPRTC_SUCCESS)
    status = rtc.hiprtcCompileProgram(handle, static_cast<int>(options.size()), options.data());
  output.log = program_log(rtc, handle);
  if (status != HIPRTC_SUCCESS) {
    output.error = rtc.hiprtcGetErrorString(status);
  } else {
    std::size_t size = 0;
    status = rtc.hiprtcGetCodeSize(handle, &size);
    output.binary.resize(size);
    if (status == HIPRTC_SUCCESS) status = rtc.hiprtcGetCode(handle, output.binary.data());
    if (status != HIPRTC_SUCCESS) output.error = std::string("hiprtcGetCode: ") + rtc.hiprtcGetErrorString(status);
    else if (size == 0) output.error = "hiprtcGetCode: an empty code object";
  }
  if (output.error.empty() && program.name_expression) {
    const char* lowered = nullptr;
    status = rtc.hiprtcGetLoweredName(handle, program.entry.c_str(), &lowered);
    if (status == HIPRTC_SUCCESS)
      output.entry = lowered;
    else
      output.error = "hiprtcGetLoweredName(" + program.entry + "): " + rtc.hiprtcGetErrorString(status);
  }
  rtc.hiprtcDestroyProgram(&handle);
  return output;
}

}  // namespace ktune
