// The GPU binaries ktune::kernels carries (library/src/gpu_variants.hpp): how a call finds the
// one it runs (exact variants, run-time-dims variants and their bounds), and, where this build
// compiled HIP code objects in (CI does, with hiprtc: no AMD GPU needed), that they are AMD GPU
// code for gfx90a and gfx1030 covering every HIP family, run-time-dims variants included.
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/family.hpp"
#include "library/src/executor.hpp"
#include "library/src/gpu_variants.hpp"
#include "tests/unit/family_descriptors.hpp"

namespace ktune::library {
namespace {

const unsigned char kBytes[] = {0};

Problem rows_problem(std::int64_t rows, std::int64_t cols) {
  return find_family("rmsnorm").make_problem({{"rows", rows}, {"cols", cols}}, Precision::bf16);
}

TEST(GpuDimsCover, ExactBoundedAndAnyDims) {
  const Problem problem = rows_problem(7, 1000);
  Problem compiled;
  double slack = -1;
  EXPECT_TRUE(gpu_dims_cover("cols=1000;", problem, compiled, slack));
  EXPECT_EQ(slack, 0);
  EXPECT_EQ(compiled.dim("cols"), 1000);
  EXPECT_FALSE(gpu_dims_cover("cols=1001;", problem, compiled, slack));
  EXPECT_TRUE(gpu_dims_cover("cols<=4096;", problem, compiled, slack));
  EXPECT_EQ(compiled.dim("cols"), 4096);  // shared memory is sized for the bound
  EXPECT_DOUBLE_EQ(slack, 4.096);
  EXPECT_FALSE(gpu_dims_cover("cols<=512;", problem, compiled, slack));
  EXPECT_TRUE(gpu_dims_cover("rows=any;cols<=1000;", problem, compiled, slack));
  EXPECT_FALSE(gpu_dims_cover("heads=any;", problem, compiled, slack));  // not a dim of rmsnorm
  EXPECT_FALSE(gpu_dims_cover("cols", problem, compiled, slack));
}

class VariantImagesTest : public ::testing::Test {
 protected:
  const KernelFamily& family = find_family("rmsnorm");
  const SearchSpace space = SearchSpace::load(std::string(KTUNE_SOURCE_DIR) + "/search_spaces/rmsnorm.cuda.json");
  Config narrow = *space.default_config();
  Config wide = space.starting_points().at(1);
  std::vector<std::string> keys;
  std::vector<std::string> configs;
  std::vector<GpuImage> images;

  void SetUp() override {
    const auto add = [&](const Config& config, const std::string& dims, const std::string& arch) {
      keys.push_back(gpu_key_prefix(family, Precision::bf16, config, space) + dims);
      configs.push_back(config.to_json().dump());
      images.push_back({keys.back(), "", "rmsnorm_kernel", "", kBytes, 1});
      images.back().arch = arch == "a" ? "gfx90a" : "gfx1030";
    };
    keys.reserve(8);
    configs.reserve(8);
    add(narrow, "cols=4096;", "a");
    add(narrow, "cols<=8192;", "a");
    add(wide, "cols<=2048;", "a");
    add(narrow, "cols<=2048;", "b");  // another architecture: never chosen for "a"
    for (std::size_t i = 0; i < images.size(); ++i) {
      images[i].key = keys[i];
      images[i].config = configs[i];
    }
  }
  VariantImages on_a() const { return {images, "gfx90a", "HIP"}; }
};

TEST_F(VariantImagesTest, ExactVariantsOnlyForTheirDims) {
  const Problem problem = rows_problem(3, 4096);
  Problem compiled;
  EXPECT_EQ(&on_a().choose(family, problem, narrow, space, false, compiled), &images[0]);
  EXPECT_EQ(compiled.dims, problem.dims);
  try {
    on_a().choose(family, rows_problem(3, 1000), narrow, space, false, compiled);
    FAIL() << "no exact variant has cols=1000";
  } catch (const ConfigCannotRun& e) {
    EXPECT_NE(std::string(e.what()).find("no HIP variant of rmsnorm (bf16)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cols=4096"), std::string::npos) << e.what();
  }
}

TEST_F(VariantImagesTest, RunTimeDimsVariantsTakeTheTightestBound) {
  Problem compiled;
  // cols=1000: the wide config's variant (bound 2048) and the narrow one's (8192) take it; the
  // narrow config has only the 8192 one on this architecture.
  EXPECT_EQ(&on_a().choose(family, rows_problem(3, 1000), narrow, space, true, compiled), &images[1]);
  EXPECT_EQ(compiled.dim("cols"), 8192);
  EXPECT_EQ(&on_a().choose(family, rows_problem(3, 1000), wide, space, true, compiled), &images[2]);
  EXPECT_EQ(compiled.dim("cols"), 2048);
  const std::vector<Config> configs_1000 = on_a().run_time_dims_configs(family, rows_problem(3, 1000));
  ASSERT_EQ(configs_1000.size(), 2u);
  EXPECT_EQ(configs_1000[0].key(), wide.key());  // tightest first
  EXPECT_EQ(configs_1000[1].key(), narrow.key());
  EXPECT_EQ(on_a().run_time_dims_configs(family, rows_problem(3, 5000)).size(), 1u);
  EXPECT_TRUE(on_a().run_time_dims_configs(family, rows_problem(3, 9000)).empty());
  EXPECT_THROW(on_a().choose(family, rows_problem(3, 9000), narrow, space, true, compiled), ConfigCannotRun);
}

#if KTUNE_LIBRARY_WITH_HIP
// An AMD GPU code object: a 64-bit ELF whose machine is EM_AMDGPU (224).
bool amdgpu_elf(const GpuImage& image) {
  if (image.size < 20 || std::memcmp(image.data, "\x7f" "ELF", 4) != 0 || image.data[4] != 2) return false;
  return (image.data[18] | (image.data[19] << 8)) == 224;
}

TEST(LibraryHipImages, CodeObjectsForEveryHipFamilyAndBothTargets) {
  std::set<std::string> families_with_run_time_dims;
  for (const testing::FamilyDescriptor& descriptor : testing::family_descriptors())
    if (!descriptor.json.value("library", nlohmann::json::object()).value("runtime_dims", nlohmann::json::object()).empty())
      families_with_run_time_dims.insert(descriptor.name);
  ASSERT_FALSE(families_with_run_time_dims.empty());
  for (const std::string arch : {"gfx90a", "gfx1030"}) {
    std::set<std::string> families, run_time_dims;
    for (const GpuImage& image : hip_images()) {
      if (image.arch != arch) continue;
      EXPECT_TRUE(amdgpu_elf(image)) << image.key;
      const std::string key(image.key);
      const std::string family = key.substr(0, key.find('|'));
      families.insert(family);
      const std::string dims = key.substr(key.rfind('|') + 1);
      if (dims.find("<=") != std::string::npos || dims.find("=any") != std::string::npos) run_time_dims.insert(family);
    }
    for (const std::string& name : testing::families_with_sources("cuda")) {
      if (!std::ifstream(std::string(KTUNE_SOURCE_DIR) + "/search_spaces/" + name + ".hip.json")) continue;
      EXPECT_TRUE(families.count(name)) << arch << ": no code object of " << name;
    }
    for (const std::string& name : families_with_run_time_dims)
      EXPECT_TRUE(run_time_dims.count(name)) << arch << ": no run-time-dims code object of " << name;
  }
}
#endif

}  // namespace
}  // namespace ktune::library
