// The Vulkan backend's build side, without a device: every family's shader compiles through
// glslang (the tune-time path) as well as glslc (the build), specialization constants are found
// by name in the SPIR-V, includes are expanded with #line directives that name the right file,
// compile errors come back as logs, and Vulkan spaces mark their parameters as specialization
// constants unless they are compile_time.
#include <gtest/gtest.h>

#include <filesystem>

#include "kernels/family.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"
#ifdef KTUNE_HAVE_VULKAN
#include "tuner/backends/vulkan/glslang_compiler.hpp"
#include "tuner/backends/vulkan/spirv_reflection.hpp"
#include "tuner/backends/vulkan/vulkan_shaders.hpp"
#endif

namespace ktune {
namespace {

#ifdef KTUNE_HAVE_VULKAN

TEST(VulkanShaders, EveryFamilyShaderCompilesThroughGlslangInEveryPrecision) {
  int shaders = 0;
  for (const KernelFamily* family : all_families()) {
    const VulkanShader* shader = family->vulkan_shader();
    if (!shader) continue;
    ++shaders;
    const std::string text = vulkan_shader_text(shader->file);
    for (const char* precision : {"FP32", "FP16", "BF16"}) {
      const GlslCompileResult result = compile_glsl(text, {std::string("KT_PRECISION_") + precision + "=1"});
      EXPECT_TRUE(result.ok) << family->name() << " " << precision << ":\n" << result.log;
      // The build-time module of the same shader exists, and both name their constants alike.
      const auto* prebuilt = prebuilt_spirv(shader->file, precision == std::string("FP32")   ? Precision::fp32
                                                          : precision == std::string("FP16") ? Precision::fp16
                                                                                             : Precision::bf16);
      ASSERT_NE(prebuilt, nullptr) << family->name();
      if (result.ok) {
        const auto from_glslang = specialization_constants(result.words);
        const auto from_glslc = specialization_constants(*prebuilt);
        ASSERT_EQ(from_glslang.size(), from_glslc.size()) << family->name();
        for (const auto& [name, constant] : from_glslc) {
          ASSERT_TRUE(from_glslang.count(name)) << family->name() << " " << name;
          EXPECT_EQ(from_glslang.at(name).id, constant.id) << family->name() << " " << name;
          EXPECT_EQ(name.rfind("KT_", 0), 0u) << family->name() << ": a tunable constant is named KT_<PARAMETER>";
        }
      }
    }
  }
  // Every family has a Vulkan shader but the test-only ones.
  EXPECT_GE(shaders, 11);
}

TEST(VulkanShaders, ReflectionFindsSpecializationConstantsByName) {
  const std::string text =
      "#version 450\n"
      "layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n"
      "layout(constant_id = 7) const uint KT_ROWS_PER_GROUP = 4;\n"
      "layout(constant_id = 3) const bool KT_USE_SHARED = false;\n"
      "const uint ROWS = KT_ROWS_PER_GROUP;\n"  // an alias: a second name for the same constant
      "layout(set = 0, binding = 0) buffer Out { uint data[]; };\n"
      "void main() { data[gl_GlobalInvocationID.x] = KT_USE_SHARED ? ROWS : 0u; }\n";
  const GlslCompileResult result = compile_glsl(text, {});
  ASSERT_TRUE(result.ok) << result.log;
  const auto constants = specialization_constants(result.words);
  ASSERT_EQ(constants.size(), 2u);  // the workgroup size's constants have no name
  EXPECT_EQ(constants.at("KT_ROWS_PER_GROUP").id, 7u);
  EXPECT_FALSE(constants.at("KT_ROWS_PER_GROUP").is_bool);
  EXPECT_EQ(constants.at("KT_USE_SHARED").id, 3u);
  EXPECT_TRUE(constants.at("KT_USE_SHARED").is_bool);
  EXPECT_THROW(specialization_constants({1, 2, 3, 4, 5}), std::runtime_error);
}

TEST(VulkanShaders, DefinesReachTheShaderAndErrorsComeBackAsLogs) {
  const std::string text =
      "#version 450\n"
      "layout(local_size_x = 1) in;\n"
      "layout(set = 0, binding = 0) buffer Out { uint data[]; };\n"
      "void main() {\n"
      "#if KT_TILE != 16 || !defined(KT_PATH_COOPMAT)\n"
      "  this_does_not_compile;\n"
      "#endif\n"
      "  data[0] = KT_TILE;\n"
      "}\n";
  EXPECT_TRUE(compile_glsl(text, {"KT_TILE=16", "KT_PATH_COOPMAT=1"}).ok);
  const GlslCompileResult wrong = compile_glsl(text, {"KT_TILE=8", "KT_PATH_COOPMAT=1"});
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.log.find("this_does_not_compile"), std::string::npos) << wrong.log;
}

TEST(VulkanShaders, IncludesAreExpandedWithLineDirectivesNamingTheirFiles) {
  const std::string text = vulkan_shader_text("kernels/rmsnorm/rmsnorm.comp");
  EXPECT_EQ(text.rfind("#version 450\n", 0), 0u);
  EXPECT_NE(text.find("#line 1 \"kernels/common/vulkan_common.glsl\""), std::string::npos);
  EXPECT_NE(text.find("#define KT_ELEM"), std::string::npos);
  EXPECT_EQ(text.find("#include"), std::string::npos);
  EXPECT_THROW(vulkan_shader_text("kernels/none/none.comp"), std::runtime_error);
}

TEST(VulkanShaders, DefinesOfAVariant) {
  Problem problem;
  problem.precision = Precision::bf16;
  Config config;
  config.values = {{"path", Value{std::string("coopmat")}}, {"stages", Value{std::int64_t{2}}}};
  const auto defines = vulkan_defines(problem, config);
  EXPECT_EQ(defines, (std::vector<std::string>{"KT_PRECISION_BF16=1", "KT_PATH_COOPMAT=1", "KT_STAGES=2"}));
  problem.precision = Precision::fp8_e4m3;
  EXPECT_THROW(vulkan_defines(problem, config), InputError);
}

#endif  // KTUNE_HAVE_VULKAN

TEST(VulkanSpaces, ParametersAreSpecializationConstantsUnlessCompileTime) {
  const nlohmann::json json = {
      {"family", "gemm"},
      {"backend", "vulkan"},
      {"parameters",
       {{{"name", "path"}, {"values", {"tiled", "coopmat"}}, {"compile_time", true}},
        {{"name", "tile_m"}, {"values", {32, 64}}}}},
      {"launch", {{"grid_x", "1"}, {"block_x", "64"}}}};
  const SearchSpace space = SearchSpace::from_json(json, "vulkan-space");
  EXPECT_EQ(space.launch_only_names(), std::vector<std::string>{"tile_m"});

  nlohmann::json cuda = json;
  cuda["backend"] = "cuda";
  try {
    SearchSpace::from_json(cuda, "cuda-space");
    FAIL() << "compile_time accepted in a CUDA space";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda-space.parameters[0].compile_time"), std::string::npos) << e.what();
  }
  nlohmann::json not_boolean = json;
  not_boolean["parameters"][0]["compile_time"] = "yes";
  EXPECT_THROW(SearchSpace::from_json(not_boolean, "vulkan-space"), InputError);
}

TEST(VulkanSpaces, BuildTimeValueIsOneOfTheValuesOfACompileTimeParameter) {
  nlohmann::json json = {
      {"family", "gemm"},
      {"backend", "vulkan"},
      {"parameters",
       {{{"name", "path"}, {"values", {"tiled", "coopmat"}}, {"compile_time", true}, {"build_time_value", "tiled"}},
        {{"name", "tile_m"}, {"values", {32, 64}}}}},
      {"launch", {{"grid_x", "1"}, {"block_x", "64"}}}};
  const SearchSpace space = SearchSpace::from_json(json, "vulkan-space");
  ASSERT_TRUE(space.parameters()[0].build_time_value.has_value());
  EXPECT_EQ(*space.parameters()[0].build_time_value, Value(std::string("tiled")));
  EXPECT_FALSE(space.parameters()[1].build_time_value.has_value());

  nlohmann::json not_a_value = json;
  not_a_value["parameters"][0]["build_time_value"] = "wmma";
  try {
    SearchSpace::from_json(not_a_value, "vulkan-space");
    FAIL() << "a build_time_value outside the values accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("parameters[0].build_time_value"), std::string::npos) << e.what();
  }
  nlohmann::json not_compile_time = json;
  not_compile_time["parameters"][1]["build_time_value"] = 32;
  EXPECT_THROW(SearchSpace::from_json(not_compile_time, "vulkan-space"), InputError);
}

// The kernel library runs only the build-time SPIR-V: each Vulkan space says which value of a
// compile-time parameter that module stands for, and its default config holds those values, so
// every family has a config the library runs without glslang.
TEST(VulkanSpaces, EveryVulkanSpaceDefaultRunsOnTheBuildTimeModule) {
  int spaces = 0;
  for (const KernelFamily* family : all_families()) {
    const auto file = std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / (family->name() + ".vulkan.json");
    if (!family->vulkan_shader() || !std::filesystem::exists(file)) continue;
    ++spaces;
    const SearchSpace space = SearchSpace::load(file);
    ASSERT_TRUE(space.default_config().has_value()) << file;
    for (const Parameter& parameter : space.parameters()) {
      if (!parameter.compile_time) continue;
      ASSERT_TRUE(parameter.build_time_value.has_value()) << file << ": " << parameter.name;
      EXPECT_EQ(space.default_config()->at(parameter.name), *parameter.build_time_value) << file;
    }
  }
  EXPECT_GT(spaces, 0);
}

}  // namespace
}  // namespace ktune
