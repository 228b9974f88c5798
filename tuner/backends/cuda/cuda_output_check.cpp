#include "tuner/backends/cuda/cuda_output_check.hpp"


#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tuner/backends/cuda/cuda_driver.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#include "tuner/backends/cuda/nvrtc_library.hpp"
#include "tuner/backends/gpu_source.hpp"

namespace ktune {
namespace {

// The kernels' source, embedded with the kernels' own (kernels/common/output_check.cuh).
constexpr const char* kSourcePath = "kernels/common/output_check.cuh";

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 4096;  // grid-stride beyond: a few waves on any current GPU

const char* kernel_suffix(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "f32";
    case Precision::fp64: return "f64";
    case Precision::fp16: return "f16";
    case Precision::bf16: return "bf16";
    case Precision::int8: return "i8";
    case Precision::uint8: return "u8";
    case Precision::int16: return "i16";
    case Precision::uint16: return "u16";
    case Precision::int32: return "i32";
    case Precision::uint32: return "u32";
    case Precision::int64: return "i64";
    case Precision::uint64: return "u64";
    default: return nullptr;
  }
}

}  // namespace

std::string CudaOutputCheck::image(const std::string& arch, std::string& why_not) {
  const bool ptx = arch.rfind("compute_", 0) == 0;
  const std::string source(embedded_source_text(kSourcePath));
  const std::string key = source + "|" + NvrtcCompiler::nvrtc_version() + "|" + arch;
  const auto path = default_binary_cache_dir() / ("output-check-" + hex16(fnv1a(key)) + (ptx ? ".ptx" : ".cubin"));
  if (std::ifstream in{path, std::ios::binary})
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const NvrtcLibrary& rtc = NvrtcLibrary::get();
  nvrtcProgram program;
  if (rtc.nvrtcCreateProgram(&program, source.c_str(), "output_check.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    why_not = "nvrtcCreateProgram failed";
    return {};
  }
  const std::string arch_option = "--gpu-architecture=" + arch;
  const char* options[] = {arch_option.c_str(), "-std=c++17"};
  const nvrtcResult compiled = rtc.nvrtcCompileProgram(program, 2, options);
  std::string image;
  if (compiled == NVRTC_SUCCESS) {
    std::size_t size = 0;
    ptx ? rtc.nvrtcGetPTXSize(program, &size) : rtc.nvrtcGetCUBINSize(program, &size);
    image.resize(size);
    ptx ? rtc.nvrtcGetPTX(program, image.data()) : rtc.nvrtcGetCUBIN(program, image.data());
    // Cached where it can be; a cache that cannot be written costs a compile per worker, no more.
    std::error_code error;
    std::filesystem::create_directories(path.parent_path(), error);
    try {
      write_file_atomically(path, image);
    } catch (const std::exception&) {
    }
  } else {
    std::size_t log_size = 0;
    rtc.nvrtcGetProgramLogSize(program, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 1) rtc.nvrtcGetProgramLog(program, log.data());
    why_not = std::string("NVRTC could not compile the output check: ") + rtc.nvrtcGetErrorString(compiled) + " " + log;
  }
  rtc.nvrtcDestroyProgram(&program);
  return image;
}

std::unique_ptr<CudaOutputCheck> CudaOutputCheck::make(const std::string& arch, std::string& why_not) {
  const std::string image = CudaOutputCheck::image(arch, why_not);
  if (image.empty()) return nullptr;
  std::unique_ptr<CudaOutputCheck> check(new CudaOutputCheck);
  const CudaDriver& cu = CudaDriver::get();
  if (const CUresult loaded = cu.cuModuleLoadData(&check->module_, image.data()); loaded != CUDA_SUCCESS) {
    why_not = "loading the output check failed: " + cu.error_text(loaded);
    return nullptr;
  }
  KT_CU(cuMemAlloc(&check->result_, 2 * sizeof(std::uint64_t)));
  KT_CU(cuMemAlloc(&check->sums_, 2 * kMaxBlocks * sizeof(double)));
  return check;
}

CudaOutputCheck::~CudaOutputCheck() {
  const CudaDriver& cu = CudaDriver::get();
  if (result_) cu.cuMemFree(result_);
  if (sums_) cu.cuMemFree(sums_);
  if (module_) cu.cuModuleUnload(module_);
}

bool CudaOutputCheck::supports(Precision precision) { return kernel_suffix(precision) != nullptr; }

double CudaOutputCheck::closeness(const std::vector<DeviceOutput>& outputs, double atol, double rtol) {
  KT_CU(cuMemsetD8(result_, 0, 2 * sizeof(std::uint64_t)));
  for (const DeviceOutput& output : outputs) {
    if (output.count == 0) continue;
    CUfunction function = nullptr;
    KT_CU(cuModuleGetFunction(&function, module_, (std::string("ktune_closeness_") + kernel_suffix(output.precision)).c_str()));
    CUdeviceptr got = output.got, expected = output.expected, result = result_;
    unsigned long long count = output.count;
    void* arguments[] = {&got, &expected, &count, &atol, &rtol, &result};
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>(kMaxBlocks, (output.count + kThreads - 1) / kThreads));
    KT_CU(cuLaunchKernel(function, blocks, 1, 1, kThreads, 1, 1, 0, nullptr, arguments, nullptr));
  }
  std::uint64_t result[2] = {0, 0};
  KT_CU(cuMemcpyDtoH(result, result_, sizeof result));
  if (static_cast<std::uint32_t>(result[1]) != 0) return NAN;
  double worst = 0;
  std::memcpy(&worst, &result[0], sizeof worst);
  return worst;
}

double CudaOutputCheck::relative_l2(const std::vector<DeviceOutput>& outputs) {
  double worst = 0;
  std::vector<double> sums;
  for (const DeviceOutput& output : outputs) {
    if (output.count == 0) continue;
    KT_CU(cuMemsetD8(result_, 0, sizeof(std::uint32_t)));
    CUfunction function = nullptr;
    KT_CU(cuModuleGetFunction(&function, module_, (std::string("ktune_l2_") + kernel_suffix(output.precision)).c_str()));
    CUdeviceptr got = output.got, expected = output.expected, partial = sums_, flag = result_;
    unsigned long long count = output.count;
    void* arguments[] = {&got, &expected, &count, &partial, &flag};
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>(kMaxBlocks, (output.count + kThreads - 1) / kThreads));
    KT_CU(cuLaunchKernel(function, blocks, 1, 1, kThreads, 1, 1, 0, nullptr, arguments, nullptr));
    std::uint32_t bad = 0;
    KT_CU(cuMemcpyDtoH(&bad, result_, sizeof bad));
    if (bad != 0) return NAN;
    sums.resize(2 * blocks);
    KT_CU(cuMemcpyDtoH(sums.data(), sums_, sums.size() * sizeof(double)));
    double diff_sq = 0, ref_sq = 0;
    for (unsigned b = 0; b < blocks; ++b) {  // in block order: the same figure on every run
      diff_sq += sums[2 * b];
      ref_sq += sums[2 * b + 1];
    }
    worst = std::max(worst, ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : std::sqrt(diff_sq));
  }
  return worst;
}

}  // namespace ktune
