// The run-time-dims variants ktune::kernels carries for shapes nobody tuned (KT_RUNTIME_DIMS=1;
// library.runtime_dims of a family's descriptor): for every such family, at its smallest bound
// and the largest one its space takes, the space's fallback config compiles with NVRTC for sm_90a and with hiprtc for
// gfx90a and gfx1030, and its binary is not the exact variant's (the define reaches the kernel).
// Whether they compute the right answer is checked on the GPU (ci/gpu-library check).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/family.hpp"
#include "library/src/fallback_order.hpp"
#include "tests/unit/family_descriptors.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/core/space_context.hpp"
#if KTUNE_HAVE_CUDA
#include "tuner/backends/cuda/cuda_device.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#endif
#if KTUNE_HAVE_HIP
#include "tuner/backends/hip/hip_backend.hpp"
#include "tuner/backends/hip/hiprtc_compiler.hpp"
#endif

namespace ktune {
namespace {

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Sample {
  const KernelFamily* family;
  Problem problem;
  Config config;  // exact; with runtime_dims=1 added for the run-time-dims variant
};

// For each family with run-time dims: its bench shape with each bounded dim at its smallest
// bound, then at the largest bound a config of the space takes (else its smallest odd shape, as
// ktune_cuda_aot does), in bf16, at the first config of the fallback order valid there on `device`.
std::vector<Sample> samples(const std::string& backend, const DeviceInfo& device) {
  std::vector<Sample> found;
  for (const testing::FamilyDescriptor& descriptor : testing::family_descriptors()) {
    const nlohmann::json runtime = descriptor.json.value("library", nlohmann::json::object()).value("runtime_dims", nlohmann::json::object());
    if (runtime.empty() || !descriptor.has_sources("cuda")) continue;
    const KernelFamily* family = &find_family(descriptor.name);
    const SearchSpace space =
        SearchSpace::load(std::string(KTUNE_SOURCE_DIR) + "/search_spaces/" + descriptor.name + "." + backend + ".json");
    // The smallest bound, then the largest this backend's space takes (HIP has no clusters to
    // split the widest rows).
    std::size_t bound_count = 0;
    for (const auto& [dim, bounds] : runtime.items()) bound_count = std::max(bound_count, bounds.size());
    std::vector<std::size_t> order{0};
    for (std::size_t i = bound_count; i-- > 1;) order.push_back(i);
    bool smallest_done = false, largest_done = bound_count <= 1;
    for (const std::size_t index : order) {
      if (smallest_done && largest_done) break;
      for (const testing::Shape& base : {descriptor.shapes("bench").at(0), descriptor.shapes("odd").at(0)}) {
        testing::Shape dims = base;
        for (const auto& [dim, bounds] : runtime.items())
          if (!bounds.empty()) dims[dim] = bounds.at(std::min(index, bounds.size() - 1)).get<std::int64_t>();
        const Problem problem = family->make_problem(dims, Precision::bf16);
        const SpaceContext context = make_context(problem, device);
        std::optional<Config> config;
        for (const Config& candidate : library::untuned_configs(space, *family))
          if (space.violated(candidate, context).empty()) {
            config = candidate;
            break;
          }
        if (!config && space.enumerate(context).size() > 0) config = space.enumerate(context).config(0);
        if (!config) continue;
        found.push_back({family, problem, *config});
        (index == 0 ? smallest_done : largest_done) = true;
        break;
      }
    }
    EXPECT_TRUE(smallest_done && largest_done) << descriptor.name << ": no config of its " << backend
                                               << " space takes its smallest run-time-dims bound, or any above it";
  }
  return found;
}

Config with_run_time_dims(Config config) {
  config.values.emplace_back("runtime_dims", std::int64_t{1});
  return config;
}

#if KTUNE_HAVE_CUDA
// A compute-bound family's untuned call tries the space's fast starting points before its
// portable default (the SIMT GEMM); a memory-bound one keeps its default first.
TEST(UntunedOrder, StartingPointsFirstOnlyForComputeBoundFamilies) {
  const auto space_of = [](const std::string& name) {
    return SearchSpace::load(std::string(KTUNE_SOURCE_DIR) + "/search_spaces/" + name + ".cuda.json");
  };
  const SearchSpace gemm = space_of("gemm");
  const auto gemm_order = library::untuned_configs(gemm, find_family("gemm"));
  ASSERT_EQ(gemm_order.size(), gemm.starting_points().size() + 1);
  EXPECT_EQ(gemm_order.front().key(), gemm.starting_points().front().key());
  EXPECT_EQ(to_string(gemm_order.front().at("path")), "wgmma");
  EXPECT_EQ(gemm_order.back().key(), gemm.default_config()->key());
  const SearchSpace rmsnorm = space_of("rmsnorm");
  const auto rmsnorm_order = library::untuned_configs(rmsnorm, find_family("rmsnorm"));
  ASSERT_EQ(rmsnorm_order.size(), rmsnorm.starting_points().size() + 1);
  EXPECT_EQ(rmsnorm_order.front().key(), rmsnorm.default_config()->key());
}

TEST(RunTimeDims, VariantsCompileWithNvrtc) {
  const std::filesystem::path cache = std::filesystem::path(::testing::TempDir()) / "run-time-dims-cubin";
  const NvrtcCompiler compiler("sm_90a", cache, /*fast_check=*/true);
  const std::vector<Sample> all = samples("cuda", nominal_cuda_device("sm_90a"));
  EXPECT_GE(all.size(), 14u);  // six families with bounds, two each; the two gated ones, one each
  for (const Sample& sample : all) {
    SCOPED_TRACE(sample.problem.describe() + " " + sample.config.describe());
    const CompiledVariant exact = compiler.compile(*sample.family, sample.problem, sample.config);
    const CompiledVariant any = compiler.compile(*sample.family, sample.problem, with_run_time_dims(sample.config));
    ASSERT_TRUE(exact.ok) << exact.log;
    ASSERT_TRUE(any.ok) << any.log;
    EXPECT_NE(file_text(exact.binary_path), file_text(any.binary_path));
  }
}
#endif

#if KTUNE_HAVE_HIP
TEST(RunTimeDims, VariantsCompileWithHiprtc) {
  const std::filesystem::path cache = std::filesystem::path(::testing::TempDir()) / "run-time-dims-hsaco";
  for (const std::string arch : {"gfx90a", "gfx1030"}) {
    const HiprtcCompiler compiler(arch, cache, /*fast_check=*/true);
    const std::vector<Sample> all = samples("hip", nominal_hip_device(arch));
    EXPECT_GE(all.size(), 14u);
    for (const Sample& sample : all) {
      SCOPED_TRACE(arch + " " + sample.problem.describe() + " " + sample.config.describe());
      const CompiledVariant any = compiler.compile(*sample.family, sample.problem, with_run_time_dims(sample.config));
      ASSERT_TRUE(any.ok) << any.log;
      EXPECT_EQ(file_text(any.binary_path).substr(0, 4), "\x7f" "ELF");
    }
  }
}
#endif

}  // namespace
}  // namespace ktune
