// The shipped CUDA search spaces, checked without a GPU on an H200's limits over the transformer
// shapes the benchmarks use and over odd ones: each has valid configs and a valid default, and
// every valid config's launch geometry is one the device accepts (cluster-divisible grid, block
// and shared memory within the limits).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <string>

#include "kernels/family.hpp"
#include "tests/unit/family_descriptors.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/core/space_context.hpp"

namespace ktune {
namespace {

DeviceInfo hopper() {
  DeviceInfo device;
  device.limits = {{"max_threads_per_block", 1024}, {"max_shared_memory_per_block", 232448}, {"sm_count", 132},
                   {"max_shared_memory_per_multiprocessor", 233472},
                   {"l2_bytes", 52428800},          {"warp_size", 32},                       {"max_cluster_size", 8},
                   {"has_wgmma", 1},                {"sm_version", 90}};
  return device;
}

std::int64_t geometry(const std::map<std::string, Value>& launch, const std::string& name, std::int64_t fallback) {
  const auto found = launch.find(name);
  return found == launch.end() ? fallback : std::get<std::int64_t>(found->second);
}

// At each family's launch shapes (kernels/<family>/family.json: one to 32768 rows, odd and
// transformer widths), in fp32 and bf16 unless the descriptor narrows the precisions (attention's
// default config is a tensor-core path, which fp32 does not take; fp32 runs the simt path alone,
// checked on the GPU).
TEST(CudaSpaces, EveryValidConfigLaunchesOnAnH200) {
  const std::filesystem::path dir = std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces";
  int spaces = 0;
  for (const std::string& name : testing::families_with_sources("cuda")) {
    const std::string file = name + ".cuda.json";
    const SearchSpace space = SearchSpace::load(dir / file);
    const KernelFamily& family = find_family(name);
    const testing::FamilyDescriptor descriptor = testing::family_descriptor(name);
    ++spaces;
    const std::vector<testing::Shape> shapes = descriptor.shapes("launch");
    ASSERT_GE(shapes.size(), 3u) << file;
    for (const testing::Shape& shape : shapes) {
      for (const std::string& precision_name : descriptor.names("launch_precisions", {"fp32", "bf16"})) {
        const Precision precision = parse_precision(precision_name).value();
        const Problem problem = family.make_problem(shape, precision);
        SCOPED_TRACE(file + " " + problem.describe());
        const SpaceContext context = make_context(problem, hopper());
        const ValidConfigs valid = space.enumerate(context);
        ASSERT_GT(valid.size(), 0u);
        ASSERT_TRUE(space.default_config());
        EXPECT_TRUE(space.violated(*space.default_config(), context).empty());
        for (std::size_t i = 0; i < valid.size(); ++i) {
          const auto launch = space.launch(valid.config(i), context);
          const std::int64_t grid = geometry(launch, "grid_x", 0), cluster = geometry(launch, "cluster_x", 1);
          ASSERT_GT(grid, 0);
          ASSERT_EQ(grid % cluster, 0) << valid.config(i).key();
          ASSERT_LE(cluster, 8);
          ASSERT_LE(geometry(launch, "block_x", 1), 1024);
          ASSERT_LE(geometry(launch, "shared_bytes", 0), 232448 - 8192) << valid.config(i).key();
        }
      }
    }
  }
  EXPECT_GE(spaces, 11);
}

// Every TMA descriptor a valid config asks for (the wgmma paths of gemm, layernorm_linear, ffn,
// attention) views memory the launch has: a problem tensor of at least rows x cols elements, or
// the workspace (ffn's hidden activation, layernorm_linear's written LN(x)) with room for the view
// from its offset; a 16-byte aligned row (TMA's stride rule) and a box of at most 256 rows.
TEST(CudaSpaces, TensorMapsViewMemoryTheLaunchHas) {
  const std::filesystem::path dir = std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces";
  int workspace_views = 0, views = 0;
  for (const std::string& name : testing::families_with_sources("cuda")) {
    const SearchSpace space = SearchSpace::load(dir / (name + ".cuda.json"));
    const KernelFamily& family = find_family(name);
    for (const testing::Shape& shape : testing::family_descriptor(name).shapes("launch")) {
      const Problem problem = family.make_problem(shape, Precision::bf16);
      SCOPED_TRACE(name + " " + problem.describe());
      const SpaceContext context = make_context(problem, hopper());
      const ValidConfigs valid = space.enumerate(context);
      const std::vector<TensorSpec> tensors = family.tensors(problem);
      for (std::size_t i = 0; i < valid.size(); ++i) {
        const Config& config = valid.config(i);
        for (const TensorMapSpec& map : family.tensor_maps(problem, config)) {
          ++views;
          const std::int64_t view_bytes = map.rows * map.cols * element_bytes(problem.precision);
          EXPECT_EQ(map.cols * element_bytes(problem.precision) % 16, 0) << config.key();
          EXPECT_LE(map.box_rows, 256) << config.key();
          if (map.tensor == TensorMapSpec::kWorkspace) {
            ++workspace_views;
            EXPECT_EQ(map.workspace_offset % 16, 0) << config.key();
            EXPECT_LE(map.workspace_offset + view_bytes, geometry(space.launch(config, context), "workspace_bytes", 0))
                << config.key();
          } else {
            ASSERT_GE(map.tensor, 0) << config.key();
            ASSERT_LT(static_cast<std::size_t>(map.tensor), tensors.size()) << config.key();
            EXPECT_LE(map.rows * map.cols, tensors[static_cast<std::size_t>(map.tensor)].elements) << config.key();
          }
        }
      }
    }
  }
  EXPECT_GT(views, 0);
  EXPECT_GT(workspace_views, 0);  // ffn's H and layernorm_linear's written rows
}

// The starting points are recorded configs (ci/choose_starting_points.py); a later change of a
// space's constraints must not leave one unusable: each is valid, on an H200, at one of the shapes
// and precisions of the family the spaces were recorded at (rows of 1024 to 32768, GEMMs from
// skinny to square, heads of 64 to 256).
TEST(CudaSpaces, StartingPointsAreValidAtARecordedKindOfShape) {
  using testing::Shape;
  const std::filesystem::path dir = std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces";
  int with_points = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(".cuda.json")) continue;
    const SearchSpace space = SearchSpace::load(entry.path());
    if (space.starting_points().empty()) continue;
    ++with_points;
    const std::string& name = space.family();
    const std::vector<Shape> shapes = testing::family_descriptor(name).shapes("recorded");
    ASSERT_FALSE(shapes.empty()) << file << ": its family's descriptor has no recorded shapes";
    const KernelFamily& family = find_family(name);
    for (const Config& point : space.starting_points()) {
      bool valid_somewhere = false;
      for (const Shape& shape : shapes)
        for (const Precision precision : {Precision::bf16, Precision::fp16, Precision::fp32})
          valid_somewhere = valid_somewhere ||
                            space.violated(point, make_context(family.make_problem(shape, precision), hopper())).empty();
      EXPECT_TRUE(valid_somewhere) << file << ": " << point.key();
    }
  }
  EXPECT_GE(with_points, 10);  // every CUDA family with a recorded space
}

// Several flash-attention blocks per SM share its registers and shared memory: the space offers
// two and three blocks where they fit (short head, 64 keys per stage) and never more blocks than
// the SM's shared memory holds, counting the 1 KiB the hardware reserves per block.
TEST(CudaSpaces, FlashAttentionBlocksPerSmFitTheSm) {
  const SearchSpace space =
      SearchSpace::load(std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / "flash_attention.cuda.json");
  const KernelFamily& family = find_family("flash_attention");
  for (const std::int64_t head_dim : {64, 128}) {
    SCOPED_TRACE("head_dim " + std::to_string(head_dim));
    const SpaceContext context = make_context(
        family.make_problem({{"batch", 16}, {"heads", 2048 / head_dim}, {"seq_q", 1024}, {"seq_kv", 1024},
                             {"head_dim", head_dim}, {"causal", 0}},
                            Precision::bf16),
        hopper());
    const ValidConfigs valid = space.enumerate(context);
    std::map<std::int64_t, int> by_blocks;
    for (std::size_t i = 0; i < valid.size(); ++i) {
      const Config& config = valid.config(i);
      const std::int64_t blocks = config.get_int("blocks_per_sm");
      ++by_blocks[blocks];
      if (blocks == 1) continue;
      EXPECT_EQ(std::get<std::string>(config.at("path")), "wgmma") << config.key();
      const auto launch = space.launch(config, context);
      EXPECT_LE(blocks * (geometry(launch, "shared_bytes", 0) + 1024), 233472) << config.key();
      // Each block's launch share of the 64K registers must hold the largest single wgmma: its
      // fp32 accumulators (half of max(block_kv, head_dim) per thread) and ~32 more.
      const std::int64_t launch_registers = 65536 / blocks / geometry(launch, "block_x", 1) / 8 * 8;
      const std::int64_t widest = std::max(config.get_int("block_kv"), head_dim);
      EXPECT_LE(widest / 2 + 32, launch_registers) << config.key();
    }
    EXPECT_GT(by_blocks[1], 0);
    EXPECT_GT(by_blocks[2], 0);
    if (head_dim == 64) EXPECT_GT(by_blocks[3], 0);  // 80 registers: only 64-wide tiles
    if (head_dim == 128) EXPECT_EQ(by_blocks[3], 0);
  }
}

// Block-sparse attention runs flash attention's wgmma kernel on Hopper: at the 16k bench shape with
// 128-blocks the space offers wgmma configs, each with query and key tiles that the mask's block
// holds whole (a query block in one row of mask blocks) and room for the list of kept blocks in
// its shared memory; without wgmma (sm_80) none.
TEST(CudaSpaces, BlockSparseAttentionTakesTheWgmmaPathOnHopper) {
  const SearchSpace space =
      SearchSpace::load(std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / "block_sparse_attention.cuda.json");
  const KernelFamily& family = find_family("block_sparse_attention");
  const Problem problem = family.make_problem({{"batch", 1}, {"heads", 32}, {"seq_q", 16384}, {"seq_kv", 16384},
                                               {"head_dim", 128}, {"block", 128}, {"density_percent", 25},
                                               {"pattern", 0}},
                                              Precision::bf16);
  DeviceInfo ampere = hopper();
  ampere.limits["has_wgmma"] = 0;
  ampere.limits["sm_version"] = 80;
  for (const bool on_hopper : {true, false}) {
    const SpaceContext context = make_context(problem, on_hopper ? hopper() : ampere);
    const ValidConfigs valid = space.enumerate(context);
    int wgmma = 0;
    for (std::size_t i = 0; i < valid.size(); ++i) {
      const Config& config = valid.config(i);
      if (std::get<std::string>(config.at("path")) != "wgmma") continue;
      ++wgmma;
      EXPECT_EQ(128 % config.get_int("block_q"), 0) << config.key();
      EXPECT_EQ(128 % config.get_int("block_kv"), 0) << config.key();
      const auto launch = space.launch(config, context);
      const std::int64_t tiles = (config.get_int("block_q") + 2 * config.get_int("stages") * config.get_int("block_kv")) *
                                 128 * 2;
      EXPECT_EQ(geometry(launch, "shared_bytes", 0), tiles + 1024 + 4 * (16384 / 128)) << config.key();
    }
    if (on_hopper)
      EXPECT_GT(wgmma, 0);
    else
      EXPECT_EQ(wgmma, 0);
  }
}

}  // namespace
}  // namespace ktune
