// What the GPU backends share when they build variants: the compiler pool (one build per
// distinct code, launch-only parameters left out), the defines of a variant, and search
// spaces' launch_only flags.
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include <gtest/gtest.h>

#include "kernels/family.hpp"
#include "tests/unit/family_descriptors.hpp"
#include "tuner/backends/compile_pool.hpp"
#include "tuner/backends/gpu_source.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/core/space_context.hpp"

namespace ktune {
namespace {

Config config_of(std::int64_t block, std::int64_t blocks_per_sm) {
  Config config;
  config.values = {{"block_threads", Value{block}}, {"blocks_per_sm", Value{blocks_per_sm}}};
  return config;
}

TEST(CompilePool, ConfigsDifferingOnlyInLaunchOnlyParametersShareOneBuild) {
  std::atomic<int> builds{0};
  std::mutex mutex;
  std::set<std::string> seen;
  auto pool = make_compile_pool(
      [&](const Config& config) {
        ++builds;
        std::lock_guard lock(mutex);
        seen.insert(config.key());
        BuiltVariant built;
        built.ok = true;
        built.build.binary = "binary-" + to_string(config.at("block_threads"));
        return built;
      },
      "gfx90a", 2, {"blocks_per_sm"});
  EXPECT_EQ(pool->arch(), "gfx90a");
  const std::vector<Config> configs{config_of(64, 0), config_of(64, 2), config_of(128, 0), config_of(64, 8)};
  for (std::size_t i = 0; i < configs.size(); ++i) pool->prefetch(i, configs[i]);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const BuiltVariant built = pool->get(i, configs[i]);
    EXPECT_TRUE(built.ok);
    EXPECT_EQ(built.build.binary, "binary-" + to_string(configs[i].at("block_threads")));
  }
  EXPECT_EQ(builds.load(), 2);  // block 64 once, block 128 once
  for (const auto& key : seen) EXPECT_EQ(key.find("blocks_per_sm"), std::string::npos) << key;
  // Without launch-only parameters every config is its own build.
  builds = 0;
  auto plain = make_compile_pool(
      [&](const Config&) {
        ++builds;
        return BuiltVariant{true, {}, ""};
      },
      "sm_90a", 1);
  for (std::size_t i = 0; i < configs.size(); ++i) EXPECT_TRUE(plain->get(i, configs[i]).ok);
  EXPECT_EQ(builds.load(), 4);
}

TEST(CompilePool, AThrowingBuildIsAFailedVariantWithItsMessage) {
  auto pool = make_compile_pool([](const Config&) -> BuiltVariant { throw InputError("no such precision"); }, "gfx1030",
                                1);
  const BuiltVariant built = pool->get(0, config_of(64, 0));
  EXPECT_FALSE(built.ok);
  EXPECT_EQ(built.log, "no such precision");
}

TEST(GpuSource, DefinesCarryTypeDimsAndParameters) {
  const KernelFamily& rmsnorm = find_family("rmsnorm");
  const Problem problem = rmsnorm.make_problem({{"rows", 7}, {"cols", 1001}}, Precision::bf16);
  Config config = config_of(256, 0);
  config.values.emplace_back("row_storage", Value{std::string("shared")});
  const auto defines = variant_defines(rmsnorm, problem, config, {Precision::fp32, Precision::bf16}, "HIP");
  for (const char* expected : {"-DKT_T=kt::bfloat16", "-DKT_PRECISION_BF16", "-DKT_DIM_COLS=1001", "-DKT_DIM_ROWS=7",
                               "-DKT_BLOCK_THREADS=256", "-DKT_ROW_STORAGE=KT_ROW_STORAGE_shared"})
    EXPECT_NE(std::find(defines.begin(), defines.end(), expected), defines.end()) << expected;
  const Problem fp16 = rmsnorm.make_problem({{"rows", 7}, {"cols", 1001}}, Precision::fp16);
  try {
    variant_defines(rmsnorm, fp16, config, {Precision::fp32, Precision::bf16}, "HIP");
    FAIL() << "fp16 is not in the supported list";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("HIP kernels take fp32, bf16, not fp16"), std::string::npos) << e.what();
  }
}

// The hash covers exactly what the run-time compiler can read for a family: its source and the
// embedded headers it includes, transitively (a shared header of another family included),
// and not another family's files, so adding or editing one family leaves the others' keys alone.
TEST(GpuSource, TheHashCoversWhatTheSourceIncludes) {
  const std::set<std::string_view> rmsnorm = embedded_includes("kernels/rmsnorm/rmsnorm.cu");
  EXPECT_EQ(rmsnorm, (std::set<std::string_view>{"kernels/common/cuda_common.cuh", "kernels/common/cuda_rows.cuh",
                                                   "kernels/common/gpu_portable.cuh", "kernels/rmsnorm/rmsnorm.cu"}));
  const std::set<std::string_view> residual = embedded_includes("kernels/residual_layernorm/residual_layernorm.cu");
  EXPECT_TRUE(residual.contains("kernels/layernorm/cuda_layernorm_row.cuh"));
  EXPECT_FALSE(residual.contains("kernels/rmsnorm/rmsnorm.cu"));
  const std::set<std::string_view> gemm = embedded_includes("kernels/gemm/gemm.cu");
  for (const char* header : {"kernels/gemm/gemm_wgmma.cuh", "kernels/gemm/gemm_mma.cuh", "kernels/gemm/gemm_simt.cuh",
                             "kernels/common/cuda_wgmma.cuh", "kernels/common/cuda_hopper.cuh"})
    EXPECT_TRUE(gemm.contains(header)) << header;
  EXPECT_FALSE(gemm.contains("kernels/common/cuda_rows.cuh"));
}

TEST(GpuSource, TheHashCoversTheSharedHeaders) {
  const GpuSource* rmsnorm = find_family("rmsnorm").cuda_source();
  const GpuSource* softmax = find_family("softmax").cuda_source();
  ASSERT_TRUE(rmsnorm && softmax);
  EXPECT_EQ(gpu_source_hash(*rmsnorm), gpu_source_hash(*rmsnorm));
  EXPECT_NE(gpu_source_hash(*rmsnorm), gpu_source_hash(*softmax));
  EXPECT_NE(gpu_main_text(*rmsnorm).find("rmsnorm_kernel"), std::string::npos);
  const EmbeddedHeaders headers;
  ASSERT_EQ(headers.names.size(), headers.texts.size());
  bool portable_header = false;
  for (const char* name : headers.names) portable_header |= std::string(name) == "kernels/common/gpu_portable.cuh";
  EXPECT_TRUE(portable_header);
}

TEST(GpuSource, PortableFamiliesHaveAHipSourceAndSpace) {
  for (const KernelFamily* family : all_families()) {
    if (!family->hip_source()) continue;
    EXPECT_EQ(family->hip_source(), family->cuda_source()) << family->name();  // one source
    const SearchSpace space =
        SearchSpace::load(std::string(KTUNE_SOURCE_DIR) + "/search_spaces/" + family->name() + ".hip.json");
    EXPECT_EQ(space.backend(), "hip");
    EXPECT_EQ(space.family(), family->name());
  }
  EXPECT_NE(find_family("gemm").hip_source(), nullptr);
  EXPECT_NE(find_family("flash_attention").hip_source(), nullptr);
}

// An AMD GPU's limits: CDNA (MI210-class, wavefronts of 64) or RDNA (wavefronts of 32).
DeviceInfo amd(bool cdna) {
  DeviceInfo device;
  device.limits = {{"max_threads_per_block", 1024}, {"max_shared_memory_per_block", 65536},
                   {"max_shared_memory_per_multiprocessor", 65536}, {"sm_count", cdna ? 104 : 80},
                   {"l2_bytes", cdna ? 8388608 : 4194304}, {"warp_size", cdna ? 64 : 32},
                   {"max_cluster_size", 1}, {"has_wgmma", 0}, {"sm_version", 0}};
  return device;
}

TEST(HipSpaces, EveryFamilyHasValidConfigsAndAValidDefaultOnAmdLimits) {
  int spaces = 0;
  for (const KernelFamily* family : all_families()) {
    if (!family->hip_source()) continue;
    ++spaces;
    const SearchSpace space =
        SearchSpace::load(std::string(KTUNE_SOURCE_DIR) + "/search_spaces/" + family->name() + ".hip.json");
    const std::vector<testing::Shape> bench = testing::family_descriptor(family->name()).shapes("bench");
    ASSERT_EQ(bench.size(), 1u) << family->name() << ": its descriptor has no bench shape";
    const testing::Shape& shape = bench.front();
    for (const bool cdna : {true, false}) {
      for (const Precision precision : {Precision::fp32, Precision::bf16}) {
        SCOPED_TRACE(family->name() + (cdna ? " cdna " : " rdna ") + std::string(to_string(precision)));
        const SpaceContext context = make_context(family->make_problem(shape, precision), amd(cdna));
        const ValidConfigs valid = space.enumerate(context);
        EXPECT_GT(valid.size(), 0u);
        ASSERT_TRUE(space.default_config());
        EXPECT_TRUE(space.violated(*space.default_config(), context).empty());
        for (std::size_t i = 0; i < valid.size(); ++i) {
          const auto launch = space.launch(valid.config(i), context);
          EXPECT_EQ(launch.count("cluster_x"), 0u);  // no thread-block clusters on AMD
          const auto block = std::get<std::int64_t>(launch.at("block_x"));
          EXPECT_TRUE(block >= 1 && block <= 1024) << valid.config(i).key();
          const auto shared = launch.count("shared_bytes") ? std::get<std::int64_t>(launch.at("shared_bytes")) : 0;
          EXPECT_LE(shared, 65536) << valid.config(i).key();
        }
      }
    }
  }
  EXPECT_EQ(spaces, 22);  // every family with a portable source
}

TEST(SearchSpaceLaunchOnly, IsReadAndChecked) {
  const nlohmann::json json = {
      {"family", "rmsnorm"},
      {"backend", "hip"},
      {"parameters",
       {{{"name", "block_threads"}, {"values", {64, 128}}},
        {{"name", "blocks_per_sm"}, {"values", {0, 2}}, {"launch_only", true}}}},
      {"launch", {{"grid_x", "1"}, {"block_x", "block_threads"}}}};
  const SearchSpace space = SearchSpace::from_json(json, "space.json");
  EXPECT_EQ(space.launch_only_names(), std::vector<std::string>{"blocks_per_sm"});
  nlohmann::json bad = json;
  bad["parameters"][1]["launch_only"] = "yes";
  try {
    SearchSpace::from_json(bad, "space.json");
    FAIL() << "launch_only must be a boolean";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("space.json.parameters[1].launch_only: expected true or false"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ktune
