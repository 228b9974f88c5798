// The CUDA backend's on-device output check (tuner/backends/cuda/cuda_output_check.hpp): its
// kernels compile through NVRTC for a real and a virtual architecture on any machine. Whether
// they agree with the host check is shown on the GPU (test_t1_tune.py, ci/gpu-check t1).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#ifdef KTUNE_HAVE_CUDA
#include "tuner/backends/cuda/cuda_output_check.hpp"
#endif

namespace ktune {
namespace {

#ifdef KTUNE_HAVE_CUDA
TEST(CudaOutputCheck, CompilesForARealAndAVirtualArchitecture) {
  const auto cache = std::filesystem::temp_directory_path() / ("ktune-output-check-" + std::to_string(::getpid()));
  ::setenv("KTUNE_CACHE_DIR", cache.c_str(), 1);
  for (const char* arch : {"sm_90a", "compute_80"}) {
    std::string why_not;
    const std::string image = CudaOutputCheck::image(arch, why_not);
    EXPECT_FALSE(image.empty()) << arch << ": " << why_not;
    EXPECT_TRUE(why_not.empty()) << why_not;
    if (std::string(arch).rfind("compute_", 0) == 0) {
      // PTX names every kernel by its C name.
      for (const char* kernel : {"ktune_closeness_f32", "ktune_closeness_f16", "ktune_closeness_bf16",
                                 "ktune_closeness_u64"})
        EXPECT_NE(image.find(kernel), std::string::npos) << kernel;
    }
  }
  // A second call is served from the cache.
  std::string why_not;
  EXPECT_FALSE(CudaOutputCheck::image("sm_90a", why_not).empty());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(cache), {}), 2);
  std::filesystem::remove_all(cache);
}

TEST(CudaOutputCheck, ReadsTheExactStorageTypesOnly) {
  for (Precision p : {Precision::fp32, Precision::fp64, Precision::fp16, Precision::bf16, Precision::int8,
                      Precision::uint64})
    EXPECT_TRUE(CudaOutputCheck::supports(p)) << to_string(p);
  // tf32 and fp8 go through the host, whose conversions the device does not copy.
  EXPECT_FALSE(CudaOutputCheck::supports(Precision::tf32));
  EXPECT_FALSE(CudaOutputCheck::supports(Precision::fp8_e4m3));
}
#else
TEST(CudaOutputCheck, NeedsACudaBuild) { GTEST_SKIP() << "this build has no CUDA backend"; }
#endif

}  // namespace
}  // namespace ktune
