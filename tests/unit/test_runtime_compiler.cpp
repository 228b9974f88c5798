// What the run-time compilers of the GPU backends share (tuner/backends/runtime_compiler.hpp): a
// variant's options, its cache key and place in the cache, what the cache serves, the log of a
// failed compile, a raw source's lowered entry name, the build pool. Checked through a compiler
// whose "API" only records what it was given; then the cache keys of NVRTC and hiprtc, which
// every binary already in a cache is found by.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "kernels/family.hpp"
#include "tuner/backends/gpu_source.hpp"
#include "tuner/backends/runtime_compiler.hpp"
#include "tuner/core/errors.hpp"
#if KTUNE_HAVE_CUDA
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#endif
#if KTUNE_HAVE_HIP
#include "tuner/backends/hip/hiprtc_compiler.hpp"
#endif

namespace ktune {
namespace {

// A kernel from outside ktune (as a T1 spec's): its own text, parameters under their own names,
// an entry that is a name expression.
const GpuSource kRawSource{"raw_test.cu", "fill<float>", "template <class T> __global__ void fill(T* y) {}",
                           /*raw_defines=*/true, /*portable=*/true};

// A family of one output with `source` (none: a CPU-only family) and options of its own for each
// compiler.
class TestFamily final : public KernelFamily {
 public:
  TestFamily(std::string name, const GpuSource* source) : name_(std::move(name)), source_(source) {}
  std::string name() const override { return name_; }
  std::string summary() const override { return "a test family"; }
  std::vector<DimSpec> dims() const override { return {{"n", 8, "elements"}}; }
  std::vector<Precision> precisions() const override { return {Precision::fp32}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    return {{"y", problem.dim("n"), true}};
  }
  double flop_count(const Problem&) const override { return 0; }
  void reference(const Problem&, HostTensors&) const override {}
  const GpuSource* cuda_source() const override { return source_; }
  std::vector<std::string> cuda_compiler_options() const override { return {"-DOWN_CUDA"}; }
  std::vector<std::string> hip_compiler_options() const override { return {"-DOWN_HIP"}; }

 private:
  std::string name_;
  const GpuSource* source_;
};

// Compiles nothing: records each program and answers with a binary naming its options, or with
// `error`.
class RecordingCompiler final : public RuntimeCompiler {
 public:
  RecordingCompiler(std::filesystem::path cache_dir, GpuApi api = GpuApi::cuda, std::mutex* one_at_a_time = nullptr)
      : RuntimeCompiler(target(api, one_at_a_time), std::move(cache_dir)), one_at_a_time_(one_at_a_time) {}

  static CompilerTarget target(GpuApi api, std::mutex* one_at_a_time) {
    CompilerTarget target;
    target.api = api;
    target.arch = "arch_1";
    target.identity = "recorder 1.0";
    target.options = {"--arch=arch_1", "-O3"};
    target.precisions = {Precision::fp32, Precision::bf16};
    target.extension = ".bin";
    target.binary_kind = "test binary";
    target.one_at_a_time = one_at_a_time;
    return target;
  }

  mutable std::atomic<int> programs{0};
  std::string error;                 // when set, every compile fails with it
  std::string log = "a warning\n";  // as compilers give it, with a trailing newline and null

 private:
  ProgramOutput translate(const RuntimeProgram& program) const override {
    ++programs;
    if (one_at_a_time_) {
      EXPECT_FALSE(one_at_a_time_->try_lock()) << "compiled without holding the lock";
    }
    ProgramOutput output;
    output.log = log + std::string(1, '\0');
    if (!error.empty()) {
      output.error = error;
      return output;
    }
    for (const char* option : program.options) output.binary += std::string(option) + "\n";
    if (program.name_expression) output.entry = "lowered_" + program.entry;
    return output;
  }

  std::mutex* one_at_a_time_;
};

std::filesystem::path fresh_cache(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / ("runtime-compiler-" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Config config_of(std::int64_t block) {
  Config config;
  config.values = {{"block_threads", Value{block}}};
  return config;
}

// The key of every binary in a cache, as NVRTC and hiprtc have always formed it.
std::filesystem::path expected_path(const std::filesystem::path& cache, const KernelFamily& family,
                                    const GpuSource& source, const std::string& identity,
                                    const std::vector<std::string>& options, const std::string& extension) {
  std::string key = gpu_source_hash(source) + "|" + identity + "|" + std::string(source.entry);
  for (const auto& option : options) key += "|" + option;
  return cache / (family.name() + "-" + hex16(fnv1a(key)) + extension);
}

// Most tests compile rmsnorm (an embedded source) at odd sizes.
class RuntimeCompilerTest : public ::testing::Test {
 protected:
  Problem rmsnorm_problem(Precision precision) const {
    return rmsnorm.make_problem({{"rows", 7}, {"cols", 1001}}, precision);
  }
  const KernelFamily& rmsnorm = find_family("rmsnorm");
};

TEST_F(RuntimeCompilerTest, OptionsAreTheTargetsThenTheDefinesThenARawSourcesOwn) {
  const RecordingCompiler compiler(fresh_cache("options"));
  const Problem problem = rmsnorm_problem(Precision::bf16);
  const auto options = compiler.options(rmsnorm, problem, config_of(256));
  std::vector<std::string> expected{"--arch=arch_1", "-O3"};
  for (auto& define : variant_defines(rmsnorm, problem, config_of(256), {Precision::fp32, Precision::bf16}, "CUDA"))
    expected.push_back(define);
  EXPECT_EQ(options, expected);  // an embedded source takes no options of the family's own

  const TestFamily raw("raw_test", &kRawSource);
  const Problem raw_problem = raw.make_problem({}, Precision::fp32);
  EXPECT_EQ(compiler.options(raw, raw_problem, config_of(64)).back(), "-DOWN_CUDA");
  const RecordingCompiler hip(fresh_cache("options-hip"), GpuApi::hip);
  EXPECT_EQ(hip.options(raw, raw_problem, config_of(64)).back(), "-DOWN_HIP");

  // A precision the target's kernels cannot store is refused by name.
  const Problem fp16 = rmsnorm_problem(Precision::fp16);
  try {
    hip.options(rmsnorm, fp16, config_of(256));
    FAIL() << "fp16 is not among the target's precisions";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("HIP kernels take fp32, bf16, not fp16"), std::string::npos) << e.what();
  }
}

TEST_F(RuntimeCompilerTest, TheCacheKeyIsTheSourceTheCompilerTheEntryAndEveryOption) {
  const auto cache = fresh_cache("key");
  const RecordingCompiler compiler(cache);
  const Problem problem = rmsnorm_problem(Precision::bf16);
  const auto path = compiler.binary_path(rmsnorm, problem, config_of(256));
  EXPECT_EQ(path, expected_path(cache, rmsnorm, *rmsnorm.cuda_source(), "recorder 1.0",
                                compiler.options(rmsnorm, problem, config_of(256)), ".bin"));
  EXPECT_NE(path, compiler.binary_path(rmsnorm, problem, config_of(128)));
  EXPECT_EQ(compiler.compile(rmsnorm, problem, config_of(256)).binary_path, path);
}

TEST_F(RuntimeCompilerTest, ASecondCompileIsServedFromTheCache) {
  const RecordingCompiler compiler(fresh_cache("cached"));
  const Problem problem = rmsnorm_problem(Precision::bf16);
  const CompiledVariant first = compiler.compile(rmsnorm, problem, config_of(256));
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cached);
  EXPECT_EQ(first.entry, rmsnorm.cuda_source()->entry);
  EXPECT_EQ(first.log, "a warning");  // without the trailing newline and null
  EXPECT_NE(file_text(first.binary_path).find("-DKT_BLOCK_THREADS=256\n"), std::string::npos);
  const CompiledVariant second = compiler.compile(rmsnorm, problem, config_of(256));
  ASSERT_TRUE(second.ok);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.compile_ms, 0);
  EXPECT_EQ(second.binary_path, first.binary_path);
  EXPECT_EQ(compiler.programs.load(), 1);
}

TEST_F(RuntimeCompilerTest, AFailedCompileSaysWhyAndLeavesNothingInTheCache) {
  RecordingCompiler compiler(fresh_cache("failed"));
  compiler.error = "COMPILATION_FAILED";
  compiler.log = "rmsnorm.cu(3): error: expected a ';'\n";
  const Problem problem = rmsnorm_problem(Precision::bf16);
  const CompiledVariant failed = compiler.compile(rmsnorm, problem, config_of(256));
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.log, "COMPILATION_FAILED: rmsnorm.cu(3): error: expected a ';'");
  EXPECT_FALSE(std::filesystem::exists(failed.binary_path));
  compiler.compile(rmsnorm, problem, config_of(256));
  EXPECT_EQ(compiler.programs.load(), 2);  // tried again, not served

  // A backend evaluating a config the tuner did not build reports it as the config's outcome.
  VariantBuild build;
  EvaluationResult result;
  EXPECT_FALSE(compile_into(compiler, rmsnorm, problem, config_of(256), build, result));
  EXPECT_EQ(result.outcome, Outcome::compile_error);
  EXPECT_EQ(result.message, failed.log);
  EXPECT_TRUE(build.binary.empty());
}

TEST_F(RuntimeCompilerTest, ANameExpressionsSymbolIsKeptBesideTheBinary) {
  const RecordingCompiler compiler(fresh_cache("lowered"));
  const TestFamily raw("raw_test", &kRawSource);
  const Problem problem = raw.make_problem({}, Precision::fp32);
  const CompiledVariant first = compiler.compile(raw, problem, config_of(64));
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_EQ(first.entry, "lowered_fill<float>");
  const CompiledVariant second = compiler.compile(raw, problem, config_of(64));
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.entry, "lowered_fill<float>");

  VariantBuild build;
  EvaluationResult result;
  ASSERT_TRUE(compile_into(compiler, raw, problem, config_of(64), build, result));
  EXPECT_EQ(build.binary, first.binary_path.string());
  EXPECT_EQ(build.entry, "lowered_fill<float>");
}

TEST_F(RuntimeCompilerTest, ACompilerThatMustRunAloneIsCalledUnderItsLock) {
  std::mutex alone;
  const RecordingCompiler compiler(fresh_cache("alone"), GpuApi::hip, &alone);
  const Problem problem = rmsnorm_problem(Precision::bf16);
  EXPECT_TRUE(compiler.compile(rmsnorm, problem, config_of(256)).ok);
  EXPECT_TRUE(alone.try_lock());  // released after the compile
  alone.unlock();
}

TEST_F(RuntimeCompilerTest, TheBuildPoolCompilesWithIt) {
  auto compiler = std::make_shared<const RecordingCompiler>(fresh_cache("pool"));
  const Problem problem = rmsnorm_problem(Precision::bf16);
  auto pool = make_runtime_variant_builder(compiler, rmsnorm, problem, 2, {});
  EXPECT_EQ(pool->arch(), "arch_1");
  pool->prefetch(0, config_of(256));
  const BuiltVariant built = pool->get(0, config_of(256));
  ASSERT_TRUE(built.ok) << built.log;
  EXPECT_EQ(built.build.binary, compiler->binary_path(rmsnorm, problem, config_of(256)).string());
  EXPECT_EQ(built.build.entry, rmsnorm.cuda_source()->entry);
  // A precision the kernels cannot store fails when the pool is made, not in every build.
  const Problem fp16 = rmsnorm_problem(Precision::fp16);
  EXPECT_THROW(make_runtime_variant_builder(compiler, rmsnorm, fp16, 1, {}), InputError);
}

TEST_F(RuntimeCompilerTest, AFamilyWithoutASourceForTheApiIsRefused) {
  EXPECT_EQ(RuntimeCompiler::source_hash(rmsnorm, GpuApi::cuda), gpu_source_hash(*rmsnorm.cuda_source()));
  const TestFamily cpu_only("cpu_only", nullptr);
  try {
    RuntimeCompiler::source_hash(cpu_only, GpuApi::hip);
    FAIL() << "a family without a GPU source has no hash";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "kernel 'cpu_only' has no HIP implementation");
  }
}

#if KTUNE_HAVE_CUDA
TEST_F(RuntimeCompilerTest, NvrtcKeysAreTheOnesItsCacheHolds) {
  const auto cache = fresh_cache("nvrtc");
  const Problem problem = rmsnorm_problem(Precision::bf16);
  const NvrtcCompiler compiler("sm_90a", cache);
  const auto options = compiler.options(rmsnorm, problem, config_of(256));
  ASSERT_GE(options.size(), 3u);
  EXPECT_EQ(options[0], "--gpu-architecture=sm_90a");
  EXPECT_EQ(options[1], "-std=c++17");
  EXPECT_EQ(options[2].rfind("-I", 0), 0u);
  EXPECT_EQ(compiler.binary_path(rmsnorm, problem, config_of(256)),
            expected_path(cache, rmsnorm, *rmsnorm.cuda_source(), NvrtcCompiler::nvrtc_version(), options, ".cubin"));
  const NvrtcCompiler ptx("compute_80", cache);
  EXPECT_EQ(ptx.binary_path(rmsnorm, problem, config_of(256)).extension(), ".ptx");
  EXPECT_THROW(NvrtcCompiler("gfx90a", cache), InputError);
}
#endif

#if KTUNE_HAVE_HIP
TEST_F(RuntimeCompilerTest, HiprtcKeysAreTheOnesItsCacheHolds) {
  const auto cache = fresh_cache("hiprtc");
  const Problem problem = rmsnorm_problem(Precision::bf16);
  const HiprtcCompiler compiler("gfx90a:sramecc+:xnack-", cache);
  EXPECT_EQ(compiler.arch(), "gfx90a");
  const auto options = compiler.options(rmsnorm, problem, config_of(256));
  ASSERT_GE(options.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(options.begin(), options.begin() + 3),
            (std::vector<std::string>{"--offload-arch=gfx90a", "-O3", "-std=c++17"}));
  EXPECT_EQ(HiprtcCompiler("gfx90a", cache, /*fast_check=*/true).options(rmsnorm, problem, config_of(256))[1], "-O0");
  EXPECT_EQ(compiler.binary_path(rmsnorm, problem, config_of(256)),
            expected_path(cache, rmsnorm, *rmsnorm.hip_source(), "hiprtc " + HiprtcCompiler::hiprtc_version(), options,
                          ".hsaco"));
  EXPECT_THROW(HiprtcCompiler("sm_90a", cache), InputError);
}
#endif

}  // namespace
}  // namespace ktune
