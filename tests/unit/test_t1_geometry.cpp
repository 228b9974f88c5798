// The launch geometry of T1 specs (tuner/formats/t1/t1_space.hpp): with GridDivX/Y/Z, exactly the
// grid and block Kernel Tuner's tune_kernel_T1 launches (grid = ceil(ProblemSize[i] / product of
// GridDiv), block = block_size_x/y/z, 256 x 1 x 1 without them), checked config by config against
// that formula on the shared brute-forced Kernel Tuner caches; GlobalSize only without GridDiv.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tuner/core/errors.hpp"
#include "tuner/core/space_context.hpp"
#include "tuner/formats/gzip.hpp"
#include "tuner/formats/t1/t1_space.hpp"

namespace ktune {
namespace {

const std::string kShared = std::string(KTUNE_SHARED_DATA_DIR) + "/kernel_tuner_caches/";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Kernel Tuner's util.get_problem_size, get_grid_dimensions and get_thread_block_dimensions,
// written out from their documented behaviour: ProblemSize padded to three axes with 1; each
// axis divided by the product of its GridDiv entries (here parameter names or whole numbers), or,
// with no GridDiv for the axis, by that axis's block size parameter (1 when the space has none);
// the block is block_size_x/y/z, defaulting to 256, 1, 1.
struct KernelTunerLaunch {
  std::int64_t grid[3];
  std::int64_t block[3];
};

KernelTunerLaunch kernel_tuner_launch(const nlohmann::json& kernel, const nlohmann::json& params) {
  static const char* kBlockNames[3] = {"block_size_x", "block_size_y", "block_size_z"};
  static const char* kGridDivs[3] = {"GridDivX", "GridDivY", "GridDivZ"};
  std::int64_t problem[3] = {1, 1, 1};
  const nlohmann::json sizes = kernel["ProblemSize"].is_array() ? kernel["ProblemSize"]
                                                                : nlohmann::json::array({kernel["ProblemSize"]});
  for (std::size_t i = 0; i < sizes.size(); ++i) problem[i] = sizes[i].get<std::int64_t>();
  KernelTunerLaunch launch{};
  for (int axis = 0; axis < 3; ++axis) {
    double divisor = 1;
    if (kernel.contains(kGridDivs[axis]) && !kernel[kGridDivs[axis]].empty()) {
      for (const auto& entry : kernel[kGridDivs[axis]])
        divisor *= entry.is_string() ? params.at(entry.get<std::string>()).get<double>() : entry.get<double>();
    } else {
      divisor = params.contains(kBlockNames[axis]) ? params[kBlockNames[axis]].get<double>() : 1;
    }
    launch.grid[axis] = static_cast<std::int64_t>(std::ceil(static_cast<double>(problem[axis]) / divisor));
    launch.block[axis] = params.contains(kBlockNames[axis]) ? params[kBlockNames[axis]].get<std::int64_t>()
                                                            : (axis == 0 ? 256 : 1);
  }
  return launch;
}

Problem problem_of(const nlohmann::json& spec) {
  Problem problem;
  const auto sizes = t1_problem_size(spec, "spec");
  for (std::size_t i = 0; i < sizes.size(); ++i) problem.dims.emplace_back("problem_size_" + std::to_string(i), sizes[i]);
  return problem;
}

// Every config of a brute-forced cache launched by ktune exactly as Kernel Tuner launched it.
void expect_cache_geometry(const std::string& spec_file, const std::string& cache_file) {
  if (!std::ifstream(kShared + spec_file).good() || !std::ifstream(kShared + cache_file).good())
    GTEST_SKIP() << "the shared data (" << kShared << ") is not beside this checkout";
  const nlohmann::json spec = nlohmann::json::parse(read_file(kShared + spec_file));
  const std::string packed = read_file(kShared + cache_file);
  const nlohmann::json cache = nlohmann::json::parse(gunzip(packed, cache_file));
  const T1Geometry geometry = t1_geometry(spec, spec_file);
  ASSERT_EQ(geometry.rule, T1GeometryRule::grid_div);
  const SearchSpace space = t1_space_from_json(spec, spec_file);
  const SpaceContext context = make_context(problem_of(spec), DeviceInfo{});
  std::size_t checked = 0;
  for (const auto& [key, record] : cache.at("cache").items()) {
    Config config;
    for (const auto& name : cache.at("tune_params_keys")) {
      const auto& value = record.at(name.get<std::string>());
      config.values.emplace_back(name.get<std::string>(), Value{value.get<std::int64_t>()});
    }
    const auto launch = launch_geometry(space, config, context);
    const KernelTunerLaunch expected = kernel_tuner_launch(spec.at("KernelSpecification"), record);
    const char* axes[3] = {"x", "y", "z"};
    for (int a = 0; a < 3; ++a) {
      ASSERT_EQ(launch.at(std::string("grid_") + axes[a]), expected.grid[a]) << key << " grid " << axes[a];
      ASSERT_EQ(launch.at(std::string("block_") + axes[a]), expected.block[a]) << key << " block " << axes[a];
    }
    ++checked;
  }
  EXPECT_GT(checked, 1000u);  // the whole brute-forced space, not a sample
}

TEST(T1Geometry, ConvolutionLaunchesAsKernelTunerDidForEveryCachedConfig) {
  // Its GlobalSize ("262144 // block_size_x // tile_size_x") disagrees with ProblemSize 4096: the
  // grid must come from GridDiv, as Kernel Tuner ran it.
  expect_cache_geometry("convolution_milo_T1.json", "convolution_milo_A100.json.gz");
}

TEST(T1Geometry, DedispersionLaunchesAsKernelTunerDidForEveryCachedConfig) {
  expect_cache_geometry("dedispersion_milo_T1.json", "dedispersion_milo_A100.json.gz");
}

nlohmann::json spec_with(const nlohmann::json& kernel_members, const nlohmann::json& parameters) {
  nlohmann::json kernel = {{"Language", "CUDA"}, {"KernelName", "k"}, {"KernelFile", "k.cu"}};
  kernel.update(kernel_members);
  return {{"ConfigurationSpace", {{"TuningParameters", parameters}}}, {"KernelSpecification", kernel}};
}

std::map<std::string, std::int64_t> launch_of(const nlohmann::json& spec, const Config& config,
                                              std::vector<std::pair<std::string, std::int64_t>> dims = {}) {
  const SearchSpace space = t1_space_from_json(spec, "spec");
  Problem problem = problem_of(spec);
  for (const auto& [name, value] : dims)
    for (auto& dim : problem.dims)
      if (dim.first == name) dim.second = value;
  return launch_geometry(space, config, make_context(problem, DeviceInfo{}));
}

Config config_of(std::initializer_list<std::pair<const char*, std::int64_t>> values) {
  Config config;
  for (const auto& [name, value] : values) config.values.emplace_back(name, Value{value});
  return config;
}

TEST(T1Geometry, MissingAxesDivideByTheirBlockSizeAndTheBlockDefaultsTo256) {
  // GridDivX only: y divides by block_size_y (a parameter), z by 1; no block_size_x parameter,
  // so the block is 256 wide, as Kernel Tuner launches it.
  const auto spec = spec_with({{"ProblemSize", {1000, 30, 7}}, {"GridDivX", {"tile", 2}}},
                              {{{"Name", "tile"}, {"Values", "[1, 4]"}}, {{"Name", "block_size_y"}, {"Values", "[4, 8]"}}});
  const auto launch = launch_of(spec, config_of({{"tile", 4}, {"block_size_y", 8}}));
  EXPECT_EQ(launch.at("grid_x"), 125);  // ceil(1000 / (4 * 2))
  EXPECT_EQ(launch.at("grid_y"), 4);    // ceil(30 / 8)
  EXPECT_EQ(launch.at("grid_z"), 7);    // ceil(7 / 1)
  EXPECT_EQ(launch.at("block_x"), 256);
  EXPECT_EQ(launch.at("block_y"), 8);
  EXPECT_EQ(launch.at("block_z"), 1);
  EXPECT_EQ(t1_geometry(spec, "spec").rule, T1GeometryRule::grid_div);
}

TEST(T1Geometry, GridDivWinsOverGlobalSizeAndFollowsTheProblemSize) {
  const auto spec =
      spec_with({{"ProblemSize", {4096}},
                 {"GridDivX", {"block_size_x", "items"}},
                 {"GlobalSizeType", "CUDA"},
                 {"LocalSize", {{"X", "block_size_x"}}},
                 {"GlobalSize", {{"X", "262144 // block_size_x"}}}},  // what a real spec wrote; not read
                {{{"Name", "block_size_x"}, {"Values", "[64, 128]"}}, {{"Name", "items"}, {"Values", "[1, 3]"}}});
  const Config config = config_of({{"block_size_x", 128}, {"items", 3}});
  EXPECT_EQ(launch_of(spec, config).at("grid_x"), 11);  // ceil(4096 / 384), not 262144 / 128
  // A --shape override moves the grid with the buffers.
  EXPECT_EQ(launch_of(spec, config, {{"problem_size_0", 100000}}).at("grid_x"), 261);
}

TEST(T1Geometry, WithoutGridDivGlobalSizeIsUsedAsWritten) {
  const nlohmann::json local = {{"X", "block_size_x"}};
  const nlohmann::json global = {{"X", "ProblemSize[0]"}};
  const nlohmann::json parameters = {{{"Name", "block_size_x"}, {"Values", "[32, 96]"}}};
  // OpenCL: GlobalSize counts threads; CUDA: blocks.
  auto opencl = spec_with({{"ProblemSize", 1000}, {"LocalSize", local}, {"GlobalSize", global}}, parameters);
  EXPECT_EQ(launch_of(opencl, config_of({{"block_size_x", 96}})).at("grid_x"), 11);
  EXPECT_EQ(t1_geometry(opencl, "spec").rule, T1GeometryRule::global_size);
  auto cuda = opencl;
  cuda["KernelSpecification"]["GlobalSizeType"] = "CUDA";
  EXPECT_EQ(launch_of(cuda, config_of({{"block_size_x", 96}})).at("grid_x"), 1000);
}

TEST(T1Geometry, MalformedGeometryNamesTheMember) {
  const nlohmann::json parameters = {{{"Name", "block_size_x"}, {"Values", "[32]"}}};
  try {
    t1_geometry(spec_with({{"ProblemSize", 10}, {"GridDivX", "block_size_x"}}, parameters), "spec.json");
    FAIL() << "a GridDivX that is not a list must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("spec.json: KernelSpecification.GridDivX"), std::string::npos) << e.what();
  }
  try {
    t1_geometry(spec_with({{"ProblemSize", 10}, {"GridDivY", {"ProblemSize[1]"}}}, parameters), "spec.json");
    FAIL() << "ProblemSize[1] of a one-axis problem must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ProblemSize[1]"), std::string::npos) << e.what();
  }
  try {
    t1_geometry(spec_with({{"ProblemSize", 10}, {"LocalSize", {{"X", "32"}}}, {"GlobalSize", {{"X", "10"}}},
                           {"GlobalSizeType", "Vulkan"}},
                          parameters),
                "spec.json");
    FAIL() << "an unknown GlobalSizeType must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("GlobalSizeType"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune
