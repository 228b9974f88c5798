// What ktune::kernels compiles while it runs (library/src/run_time_images.hpp): a config a call
// asks for that the library does not carry is compiled with NVRTC for the device's architecture,
// once, into the binary cache; a variant that does not compile, a missing compiler and
// KTUNE_LIBRARY_COMPILE=0 each give a reason, not a crash. And when a call compiles
// (config_choice.hpp): a config the caller gives, and a shape nothing carried covers, after every
// carried binary (exact or run-time-dims). No GPU needed: NVRTC compiles for a named architecture.
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <span>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/family.hpp"
#include "library/src/config_choice.hpp"
#include "library/src/executor.hpp"
#include "library/src/library_spaces.hpp"
#include "library/src/run_time_images.hpp"
#include "tests/unit/family_descriptors.hpp"
#include "tuner/core/errors.hpp"
#if KTUNE_LIBRARY_WITH_CUDA
#include "tuner/backends/cuda/cuda_device.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#endif

namespace ktune::library {
namespace {

#if KTUNE_LIBRARY_WITH_CUDA

class RunTimeImagesTest : public ::testing::Test {
 protected:
  std::filesystem::path cache;
  void SetUp() override {
    cache = std::filesystem::temp_directory_path() /
            ("ktune-run-time-images-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(cache);
    ::unsetenv("KTUNE_LIBRARY_COMPILE");
  }
  void TearDown() override {
    std::filesystem::remove_all(cache);
    ::unsetenv("KTUNE_LIBRARY_COMPILE");
  }
  RunTimeImages::MakeCompiler nvrtc(const std::string& arch, int* made = nullptr) {
    return [this, arch, made] {
      if (made) ++*made;
      return std::make_unique<const NvrtcCompiler>(arch, cache);
    };
  }
};

// An rmsnorm width no carried binary was compiled for (the descriptor's shapes are 1, 17, 1001,
// 4096, 4097 and the run-time-dims bounds).
struct Uncarried {
  const KernelFamily& family = find_family("rmsnorm");
  const SearchSpace& space = library_space("rmsnorm", "cuda");
  const Problem problem = family.make_problem({{"rows", 48}, {"cols", 160}}, Precision::bf16);
  const Config config = *space.default_config();
  const std::string key = gpu_variant_key(family, problem, config, space);
};

TEST_F(RunTimeImagesTest, CompilesAConfigTheLibraryLacksOnceIntoTheCache) {
  const Uncarried call;
  ASSERT_EQ((VariantImages{cuda_images(), "sm_90a", "CUDA"}.exact(call.key)), nullptr) << call.key;
  int made = 0;
  RunTimeImages images(nvrtc("sm_90a", &made));
  const GpuImage& image = images.image(call.family, call.problem, call.config, call.key);
  EXPECT_EQ(image.key, call.key);
  EXPECT_EQ(image.arch, "sm_90a");
  EXPECT_FALSE(image.entry.empty());
  ASSERT_GT(image.size, 4u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(image.data), 4), "\x7f" "ELF");  // a CUBIN
  std::size_t cubins = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache)) cubins += entry.path().extension() == ".cubin";
  EXPECT_EQ(cubins, 1u);
  // The second call takes the same image; the compiler was made once.
  EXPECT_EQ(&images.image(call.family, call.problem, call.config, call.key), &image);
  EXPECT_EQ(made, 1);
  // Another process (another RunTimeImages) reads the cached binary: the same bytes.
  RunTimeImages later(nvrtc("sm_90a"));
  const GpuImage& again = later.image(call.family, call.problem, call.config, call.key);
  ASSERT_EQ(again.size, image.size);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(again.data), again.size),
            std::string(reinterpret_cast<const char*>(image.data), image.size));
}

TEST_F(RunTimeImagesTest, PtxForAVirtualArchitectureEndsInItsNull) {
  const Uncarried call;
  RunTimeImages images(nvrtc("compute_80"));
  const GpuImage& image = images.image(call.family, call.problem, call.config, call.key);
  const std::string text(reinterpret_cast<const char*>(image.data), image.size);
  EXPECT_NE(text.find(".version"), std::string::npos);
  EXPECT_EQ(text.back(), '\0');
}

TEST_F(RunTimeImagesTest, OffWhenAskedAndWithoutACompiler) {
  const Uncarried call;
  ::setenv("KTUNE_LIBRARY_COMPILE", "0", 1);
  int made = 0;
  RunTimeImages images(nvrtc("sm_90a", &made));
  try {
    images.image(call.family, call.problem, call.config, call.key);
    FAIL() << "compiled with KTUNE_LIBRARY_COMPILE=0";
  } catch (const ConfigCannotRun& e) {
    EXPECT_NE(std::string(e.what()).find("KTUNE_LIBRARY_COMPILE=0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(made, 0);
  ::unsetenv("KTUNE_LIBRARY_COMPILE");

  int asked = 0;
  RunTimeImages none([&asked]() -> std::unique_ptr<const RuntimeCompiler> {
    ++asked;
    throw BackendUnavailable("NVRTC is not on this machine");
  });
  for (int i = 0; i < 2; ++i) {
    try {
      none.image(call.family, call.problem, call.config, call.key);
      FAIL() << "compiled without a compiler";
    } catch (const ConfigCannotRun& e) {
      EXPECT_NE(std::string(e.what()).find("it cannot be compiled here: NVRTC is not on this machine"),
                std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(asked, 1);  // not asked again on every call
}

TEST_F(RunTimeImagesTest, AVariantThatDoesNotCompileIsRefusedWithTheReasonAndRemembered) {
  // A wgmma GEMM (Hopper's warpgroup instructions) cannot compile for sm_80.
  const KernelFamily& family = find_family("gemm");
  const SearchSpace& space = library_space("gemm", "cuda");
  const Problem problem =
      family.make_problem({{"m", 256}, {"n", 256}, {"k", 256}, {"b_layout", 0}, {"epilogue", 0}}, Precision::bf16);
  std::optional<Config> wgmma;
  for (const Config& config : space.starting_points())
    if (!wgmma && config.has("path") && to_string(config.at("path")) == "wgmma") wgmma = config;
  ASSERT_TRUE(wgmma) << "the gemm space has no wgmma starting point";
  const std::string key = gpu_variant_key(family, problem, *wgmma, space);
  RunTimeImages images(nvrtc("sm_80"));
  std::string first;
  try {
    images.image(family, problem, *wgmma, key);
    FAIL() << "a wgmma variant compiled for sm_80";
  } catch (const ConfigCannotRun& e) {
    first = e.what();
  }
  EXPECT_NE(first.find("it does not compile for sm_80"), std::string::npos) << first;
  try {
    images.image(family, problem, *wgmma, key);
    FAIL() << "compiled the second time";
  } catch (const ConfigCannotRun& e) {
    EXPECT_EQ(first, e.what());
  }
}

#endif  // KTUNE_LIBRARY_WITH_CUDA

// An executor that carries nothing: every prepare fails, prepare_or_compile counts its calls and
// succeeds from the `compiles`-th on (0: never).
class CarriesNothing final : public Executor {
 public:
  explicit CarriesNothing(int succeed_at) : succeed_at_(succeed_at) {
    info_.backend = "cpu";
    info_.name = "an executor that carries nothing";
    info_.limits = {{"hardware_threads", 8}};
  }
  const DeviceInfo& device() const override { return info_; }
  bool runs(const KernelFamily&) const override { return true; }
  void* allocate(std::size_t) override { return nullptr; }
  void release(void*) override {}
  void copy_to_device(void*, const void*, std::size_t) override {}
  void copy_to_host(void*, const void*, std::size_t) override {}
  void synchronize() override {}
  PreparedLaunch prepare(const KernelFamily&, const Problem&, const Config&, const SearchSpace&) override {
    ++prepared;
    throw ConfigCannotRun("no binary carried");
  }
  PreparedLaunch prepare_or_compile(const KernelFamily&, const Problem&, const Config& config,
                                    const SearchSpace&) override {
    compiled.push_back(config.key());
    if (succeed_at_ == 0 || static_cast<int>(compiled.size()) < succeed_at_) throw ConfigCannotRun("does not compile");
    return [](std::span<void* const>, void*) {};
  }
  int prepared = 0;
  std::vector<std::string> compiled;

 private:
  int succeed_at_;
  DeviceInfo info_;
};

TEST(RunTimeCompileChoice, AShapeNothingCarriedCoversCompilesTheDefaultLast) {
  const KernelFamily& family = find_family("rmsnorm");
  const Problem problem = family.make_problem({{"rows", 48}, {"cols", 160}}, Precision::fp32);
  CarriesNothing executor(1);
  const ChosenConfig chosen = choose_config(executor, family, problem);
  EXPECT_GT(executor.prepared, 0);  // every carried binary was tried first
  ASSERT_EQ(executor.compiled.size(), 1u);
  EXPECT_EQ(chosen.choice.source, "default");
  EXPECT_EQ(chosen.choice.config_json, executor.compiled.front());
}

TEST(RunTimeCompileChoice, CompilesAFewConfigsThenSaysWhy) {
  const KernelFamily& family = find_family("rmsnorm");
  const Problem problem = family.make_problem({{"rows", 48}, {"cols", 160}}, Precision::fp32);
  CarriesNothing executor(0);
  try {
    choose_config(executor, family, problem);
    FAIL() << "a call ran with nothing carried or compiled";
  } catch (const kernels::Error& e) {
    EXPECT_EQ(e.code(), kernels::ErrorCode::unsupported);
    // The message says why the carried binaries and the compiles both failed.
    EXPECT_NE(std::string(e.what()).find("no binary carried"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("compiling one now: fallback config: does not compile"), std::string::npos)
        << e.what();
  }
  EXPECT_GE(executor.compiled.size(), 1u);
  EXPECT_LE(executor.compiled.size(), 4u);  // a few compiles, not the whole space
}

TEST(RunTimeCompileChoice, AGivenConfigIsCompiledWhenNotCarried) {
  const KernelFamily& family = find_family("rmsnorm");
  const Problem problem = family.make_problem({{"rows", 48}, {"cols", 160}}, Precision::fp32);
  const SearchSpace& space = library_space("rmsnorm", "cpu");
  const Config config = *space.default_config();
  CarriesNothing executor(1);
  const ChosenConfig chosen = given_config(executor, family, problem, config.to_json().dump());
  EXPECT_EQ(chosen.choice.source, "given");
  ASSERT_EQ(executor.compiled.size(), 1u);
  EXPECT_EQ(executor.prepared, 0);
}

}  // namespace
}  // namespace ktune::library
