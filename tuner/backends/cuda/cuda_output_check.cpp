#include "tuner/backends/cuda/cuda_output_check.hpp"

#include <nvrtc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tuner/backends/cuda/cuda_driver.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#include "tuner/backends/gpu_source.hpp"

namespace ktune {
namespace {

// One kernel per storage type. Each element is judged exactly as stored_outputs_closeness judges
// it on the host (tuner/backends/output_check.cpp): the same conversions to double (fp16 and
// bf16 decoded bit by bit, both exact), the same comparisons and the same IEEE float64 division,
// so the worst ratio is the host's to the last bit. No headers: the math functions used are
// NVRTC's built-ins. Blocks reduce in shared memory and one thread a block updates the result.
constexpr const char* kSource = R"(
typedef unsigned long long kt_u64;
__device__ double kt_inf() { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ double kt_half(unsigned short h) {
  const unsigned e = (h >> 10) & 31u, m = h & 1023u;
  const double sign = (h & 0x8000u) ? -1.0 : 1.0;
  if (e == 31u) return m ? __longlong_as_double(0x7ff8000000000000ll) : sign * kt_inf();
  if (e == 0u) return sign * ldexp((double)m, -24);
  return sign * ldexp((double)(m | 1024u), (int)e - 25);
}
__device__ double kt_bf16(unsigned short h) { return (double)__int_as_float((int)((unsigned)h << 16)); }
#define KT_SAME(x) ((double)(x))

__device__ void kt_reduce(double worst, unsigned bad, kt_u64* result) {
  __shared__ double worst_of[256];
  __shared__ unsigned bad_of[256];
  worst_of[threadIdx.x] = worst;
  bad_of[threadIdx.x] = bad;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      worst_of[threadIdx.x] = fmax(worst_of[threadIdx.x], worst_of[threadIdx.x + s]);
      bad_of[threadIdx.x] |= bad_of[threadIdx.x + s];
    }
    __syncthreads();
  }
  // A non-negative double orders as its bits do.
  if (threadIdx.x == 0 && worst_of[0] > 0) atomicMax(result, (kt_u64)__double_as_longlong(worst_of[0]));
  if (threadIdx.x == 0 && bad_of[0]) atomicOr((unsigned*)(result + 1), 1u);
}

#define KT_CLOSENESS(suffix, type, convert)                                                        \
  extern "C" __global__ void __launch_bounds__(256) ktune_closeness_##suffix(                      \
      const type* got, const double* expected, kt_u64 n, double atol, double rtol, kt_u64* result) { \
    double worst = 0;                                                                               \
    unsigned bad = 0;                                                                               \
    for (kt_u64 i = blockIdx.x * (kt_u64)blockDim.x + threadIdx.x; i < n; i += (kt_u64)gridDim.x * blockDim.x) { \
      const double e = expected[i];                                                                 \
      if (e != e) continue; /* not checked */                                                       \
      const double v = convert(got[i]);                                                             \
      if (v == e) continue; /* also the same infinity */                                            \
      if (v - v != 0.0 || fabs(e) == kt_inf()) { bad = 1u; continue; }                             \
      const double allowed = atol + rtol * fabs(e);                                                 \
      worst = fmax(worst, allowed > 0 ? fabs(v - e) / allowed : kt_inf());                          \
    }                                                                                               \
    kt_reduce(worst, bad, result);                                                                  \
  }
KT_CLOSENESS(f32, float, KT_SAME)
KT_CLOSENESS(f64, double, KT_SAME)
KT_CLOSENESS(f16, unsigned short, kt_half)
KT_CLOSENESS(bf16, unsigned short, kt_bf16)
KT_CLOSENESS(i8, signed char, KT_SAME)
KT_CLOSENESS(u8, unsigned char, KT_SAME)
KT_CLOSENESS(i16, short, KT_SAME)
KT_CLOSENESS(u16, unsigned short, KT_SAME)
KT_CLOSENESS(i32, int, KT_SAME)
KT_CLOSENESS(u32, unsigned, KT_SAME)
KT_CLOSENESS(i64, long long, KT_SAME)
KT_CLOSENESS(u64, unsigned long long, KT_SAME)
)";

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
  const std::string key = std::string(kSource) + "|" + NvrtcCompiler::nvrtc_version() + "|" + arch;
  const auto path = default_binary_cache_dir() / ("output-check-" + hex16(fnv1a(key)) + (ptx ? ".ptx" : ".cubin"));
  if (std::ifstream in{path, std::ios::binary})
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, kSource, "output_check.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    why_not = "nvrtcCreateProgram failed";
    return {};
  }
  const std::string arch_option = "--gpu-architecture=" + arch;
  const char* options[] = {arch_option.c_str(), "-std=c++17"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 2, options);
  std::string image;
  if (compiled == NVRTC_SUCCESS) {
    std::size_t size = 0;
    (ptx ? nvrtcGetPTXSize : nvrtcGetCUBINSize)(program, &size);
    image.resize(size);
    (ptx ? nvrtcGetPTX : nvrtcGetCUBIN)(program, image.data());
    // Cached where it can be; a cache that cannot be written costs a compile per worker, no more.
    std::error_code error;
    std::filesystem::create_directories(path.parent_path(), error);
    try {
      write_file_atomically(path, image);
    } catch (const std::exception&) {
    }
  } else {
    std::size_t log_size = 0;
    nvrtcGetProgramLogSize(program, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 1) nvrtcGetProgramLog(program, log.data());
    why_not = std::string("NVRTC could not compile the output check: ") + nvrtcGetErrorString(compiled) + " " + log;
  }
  nvrtcDestroyProgram(&program);
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
  return check;
}

CudaOutputCheck::~CudaOutputCheck() {
  const CudaDriver& cu = CudaDriver::get();
  if (result_) cu.cuMemFree(result_);
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

}  // namespace ktune
