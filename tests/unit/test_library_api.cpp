// ktune::kernels' C++ API on the CPU: a call runs and is checked against the float64 reference,
// the config it takes is reported, and every kind of bad call is a typed Error naming the
// argument, never a crash or a silent wrong answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <functional>

#include <string>
#include <vector>

#include "ktune/families.hpp"
#include "ktune/kernels.hpp"
#include "ktune/kernels_reference.hpp"

namespace kk = ktune::kernels;

namespace {

// The error of `call`, or a failure when it throws nothing.
kk::Error error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const kk::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return kk::Error(kk::ErrorCode::backend_failure, "none");
}

void expect_error(const std::function<void()>& call, kk::ErrorCode code, const std::string& words) {
  const kk::Error e = error_of(call);
  EXPECT_EQ(e.code(), code) << e.what();
  EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
}

TEST(LibraryApi, ListsEveryFamilyWithItsTensorsAndDims) {
  const auto families = kk::families();
  std::vector<std::string> names;
  for (const auto& family : families) names.push_back(family.name);
  for (const char* expected : {"rmsnorm", "layernorm", "softmax", "swiglu", "gemm", "flash_attention", "copy"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_EQ(std::find(names.begin(), names.end(), "fault_injection"), names.end());  // test-only
  const auto rmsnorm = *std::find_if(families.begin(), families.end(), [](const auto& f) { return f.name == "rmsnorm"; });
  ASSERT_EQ(rmsnorm.tensors.size(), 3u);
  EXPECT_EQ(rmsnorm.tensors[2].name, "out");
  EXPECT_TRUE(rmsnorm.tensors[2].is_output);
  EXPECT_NE(std::find(rmsnorm.backends.begin(), rmsnorm.backends.end(), kk::Backend::cpu), rmsnorm.backends.end());
}

// Runs `family` on the CPU through the library at `dims` on random inputs; its output tensor
// `output` within the family's tolerance of the float64 reference.
void expect_cpu_call_matches_reference(kk::Context& context, const std::string& family,
                                       const std::vector<kk::DimArgument>& dims, kk::Precision precision,
                                       const std::string& output = "out") {
  SCOPED_TRACE(family + " " + std::string(kk::to_string(precision)));
  kk::ReferenceProblem reference(family, dims, precision, 11);
  std::vector<void*> memory;
  std::vector<kk::TensorArgument> tensors;
  const auto names = reference.tensor_names();
  ASSERT_NE(std::find(names.begin(), names.end(), output), names.end()) << family << " has no tensor " << output;
  for (const auto& name : names) {
    memory.push_back(context.allocate(reference.bytes(name)));
    context.copy_to_device(memory.back(), reference.data(name), reference.bytes(name));
  }
  for (std::size_t t = 0; t < names.size(); ++t) tensors.push_back({names[t], memory[t]});
  context.run(family, tensors, dims, precision);
  context.synchronize();
  for (std::size_t t = 0; t < names.size(); ++t) {
    if (names[t] != output) continue;
    std::vector<unsigned char> out(reference.bytes(output));
    context.copy_to_host(out.data(), memory[t], out.size());
    EXPECT_LE(reference.error(output, out.data()), reference.tolerance());
  }
  for (void* m : memory) context.release(m);
}

TEST(LibraryApi, ACallOnTheCpuMatchesTheReferenceAndSaysWhichConfigRan) {
  kk::Context context(kk::Backend::cpu);
  EXPECT_EQ(context.backend(), kk::Backend::cpu);
  const std::vector<kk::DimArgument> dims{{"rows", 37}, {"cols", 1001}};
  for (kk::Precision precision : {kk::Precision::fp32, kk::Precision::fp16, kk::Precision::bf16}) {
    expect_cpu_call_matches_reference(context, "layernorm", dims, precision);
    const kk::ConfigChoice choice = context.choose("layernorm", dims, precision);
    EXPECT_EQ(choice.source, "default");  // no tables in this build
    EXPECT_FALSE(choice.config.empty());
  }
}

TEST(LibraryApi, InstanceNormTakesImageDims) {
  kk::Context context(kk::Backend::cpu);
  const std::vector<kk::DimArgument> dims{{"batch", 2}, {"channels", 3}, {"height", 17}, {"width", 29}};
  for (kk::Precision precision : {kk::Precision::fp32, kk::Precision::bf16})
    expect_cpu_call_matches_reference(context, "instance_norm", dims, precision);
}

TEST(LibraryApi, LayerNormLinearTakesGemmDims) {
  kk::Context context(kk::Backend::cpu);
  const std::vector<kk::DimArgument> dims{{"m", 37}, {"n", 101}, {"k", 95}};
  for (kk::Precision precision : {kk::Precision::fp32, kk::Precision::bf16})
    expect_cpu_call_matches_reference(context, "layernorm_linear", dims, precision, "y");
}

TEST(LibraryApi, FfnTakesItsActivation) {
  kk::Context context(kk::Backend::cpu);
  for (std::int64_t activation : {0, 1, 2}) {
    const std::vector<kk::DimArgument> dims{{"m", 9}, {"k", 40}, {"f", 67}, {"activation", activation}};
    expect_cpu_call_matches_reference(context, "ffn", dims, kk::Precision::bf16, "y");
  }
}

TEST(LibraryApi, PagedAttentionTakesItsCacheAndTable) {
  kk::Context context(kk::Backend::cpu);
  const std::vector<kk::DimArgument> dims{{"batch", 3}, {"heads", 8},      {"kv_heads", 2},
                                          {"head_dim", 64}, {"page_size", 16}, {"seq_kv", 301}};
  for (kk::Precision precision : {kk::Precision::fp32, kk::Precision::bf16})
    expect_cpu_call_matches_reference(context, "paged_attention", dims, precision, "o");
}

TEST(LibraryApi, GroupedGemmTakesItsGroupSizes) {
  kk::Context context(kk::Backend::cpu);
  const std::vector<kk::DimArgument> dims{{"m", 301}, {"experts", 8}, {"n", 136}, {"k", 72}};
  for (kk::Precision precision : {kk::Precision::fp32, kk::Precision::bf16})
    expect_cpu_call_matches_reference(context, "grouped_gemm", dims, precision, "d");
}

// attention_block is composed of other families' calls: gemm, split_heads, flash_attention,
// merge_heads and gemm, each with its own config, through intermediates the context owns.
TEST(LibraryApi, AttentionBlockRunsItsStagesInOneCall) {
  kk::Context context(kk::Backend::cpu);
  for (const auto& [causal, rope, kv_heads, residual] : {std::tuple{0, 0, 0, 1}, {1, 1, 2, 1}, {1, 0, 1, 0}}) {
    const std::vector<kk::DimArgument> dims{{"batch", 2},    {"seq", 37},           {"hidden", 70},
                                            {"heads", 4},    {"kv_heads", kv_heads}, {"head_dim", 32},
                                            {"causal", causal}, {"rope", rope},      {"residual", residual}};
    SCOPED_TRACE("causal " + std::to_string(causal) + " rope " + std::to_string(rope) + " residual " +
                 std::to_string(residual));
    for (kk::Precision precision : {kk::Precision::fp32, kk::Precision::bf16})
      expect_cpu_call_matches_reference(context, "attention_block", dims, precision, "y");
    const kk::ConfigChoice choice = context.choose("attention_block", dims, kk::Precision::bf16);
    EXPECT_EQ(choice.source, "composed");
    for (const char* stage : {"gemm (", "split_heads (", "flash_attention (", "merge_heads ("})
      EXPECT_NE(choice.config.find(stage), std::string::npos) << choice.config;
    try {
      context.use_config("attention_block", dims, kk::Precision::bf16, "{}");
      ADD_FAILURE() << "use_config took a config for a composed family";
    } catch (const kk::Error& e) {
      EXPECT_EQ(e.code(), kk::ErrorCode::bad_argument);
      EXPECT_NE(std::string(e.what()).find("stage"), std::string::npos) << e.what();
    }
  }
  const auto families = kk::families();
  const auto block = std::find_if(families.begin(), families.end(), [](const auto& f) { return f.name == "attention_block"; });
  ASSERT_NE(block, families.end());
  EXPECT_NE(std::find(block->backends.begin(), block->backends.end(), kk::Backend::cpu), block->backends.end());
  // Where every stage's family runs in this build (the CPU always; Vulkan, CUDA, HIP when built).
  auto backends_of = [&](const std::string& name) {
    const auto family = std::find_if(families.begin(), families.end(), [&](const auto& f) { return f.name == name; });
    return family == families.end() ? std::vector<kk::Backend>{} : family->backends;
  };
  std::vector<kk::Backend> everywhere = backends_of("gemm");
  for (const char* stage : {"split_heads", "flash_attention", "merge_heads"}) {
    const auto runs = backends_of(stage);
    std::erase_if(everywhere, [&](kk::Backend b) { return std::find(runs.begin(), runs.end(), b) == runs.end(); });
  }
  EXPECT_EQ(block->backends, everywhere);
  EXPECT_NE(std::find(block->backends.begin(), block->backends.end(), kk::Backend::cpu), block->backends.end());
  const std::vector<kk::StageInfo> stages =
      kk::stages("attention_block", {{"batch", 1}, {"seq", 9}, {"hidden", 24}, {"heads", 2}, {"head_dim", 8}},
                 kk::Precision::fp32);
  ASSERT_EQ(stages.size(), 5u);
  EXPECT_EQ(stages[2].family, "flash_attention");
  EXPECT_TRUE(kk::stages("rmsnorm", {{"rows", 2}, {"cols", 3}}, kk::Precision::fp32).empty());
  {  // Calls at several lengths share one scratch per stream: grown for a longer one, reused by a shorter.
    kk::Context lengths(kk::Backend::cpu);
    for (const std::int64_t seq : {37, 9, 50, 1, 50}) {
      SCOPED_TRACE("seq " + std::to_string(seq));
      expect_cpu_call_matches_reference(lengths, "attention_block",
                                        {{"batch", 2}, {"seq", seq}, {"hidden", 24}, {"heads", 2}, {"head_dim", 8},
                                         {"causal", 1}, {"rope", 1}},
                                        kk::Precision::fp32, "y");
    }
  }
  {  // A config given to a stage's problem reaches the composed call made before it.
    kk::Context later(kk::Backend::cpu);
    const std::vector<kk::DimArgument> dims{{"batch", 1}, {"seq", 9}, {"hidden", 24}, {"heads", 2}, {"head_dim", 8}};
    expect_cpu_call_matches_reference(later, "attention_block", dims, kk::Precision::fp32, "y");
    const kk::StageInfo& split = stages[1];
    std::vector<kk::DimArgument> split_dims;
    for (const auto& [name, value] : split.dims) split_dims.push_back({name, value});
    const kk::ConfigChoice own = later.choose(split.family, split_dims, kk::Precision::fp32);
    EXPECT_EQ(later.use_config(split.family, split_dims, kk::Precision::fp32, own.config_json).source, "given");
    EXPECT_NE(later.choose("attention_block", dims, kk::Precision::fp32).config.find("split_heads (given)"),
              std::string::npos);
    expect_cpu_call_matches_reference(later, "attention_block", dims, kk::Precision::fp32, "y");
  }
  const auto available = kk::Context::available();
  if (std::find(available.begin(), available.end(), kk::Backend::vulkan) == available.end()) return;
  kk::Context vulkan(kk::Backend::vulkan);  // lavapipe: every stage's shader, each intermediate its own buffer
  const std::vector<kk::DimArgument> dims{{"batch", 2}, {"seq", 19},    {"hidden", 40},   {"heads", 4},
                                          {"kv_heads", 2}, {"head_dim", 16}, {"causal", 1}, {"rope", 1}};
  expect_cpu_call_matches_reference(vulkan, "attention_block", dims, kk::Precision::fp32, "y");
}

TEST(LibraryApi, FlashAttentionBackwardGivesEveryGradient) {
  kk::Context context(kk::Backend::cpu);
  const std::vector<kk::DimArgument> dims{{"batch", 1},   {"heads", 4},    {"kv_heads", 2}, {"seq_q", 37},
                                          {"seq_kv", 45}, {"head_dim", 32}, {"causal", 1}};
  for (const char* output : {"dq", "dk", "dv"})
    expect_cpu_call_matches_reference(context, "flash_attention_backward", dims, kk::Precision::bf16, output);
}

TEST(LibraryApi, BlockSparseAttentionTakesItsMask) {
  kk::Context context(kk::Backend::cpu);
  const std::vector<kk::DimArgument> dims{{"batch", 1},    {"heads", 2},  {"seq_q", 300},
                                          {"seq_kv", 300}, {"head_dim", 64}, {"causal", 1},
                                          {"block", 64},   {"density_percent", 30}, {"pattern", 1}};
  for (kk::Precision precision : {kk::Precision::fp32, kk::Precision::bf16})
    expect_cpu_call_matches_reference(context, "block_sparse_attention", dims, precision, "o");
}

TEST(LibraryApi, MoeRoutingAndMoeCombineMatchTheirReferences) {
  kk::Context context(kk::Backend::cpu);
  const std::vector<kk::DimArgument> dims{{"tokens", 301},          {"experts", 16}, {"top_k", 2}, {"hidden", 40},
                                          {"capacity_percent", 90}, {"renormalize", 1}};
  for (const char* output : {"rows", "weights", "dispatched"})
    expect_cpu_call_matches_reference(context, "moe_routing", dims, kk::Precision::bf16, output);
  const std::vector<kk::DimArgument> combine{{"tokens", 301}, {"top_k", 2}, {"hidden", 40}};
  for (kk::Precision precision : {kk::Precision::fp32, kk::Precision::bf16})
    expect_cpu_call_matches_reference(context, "moe_combine", combine, precision, "y");
}

// The generated typed functions (ktune/families.hpp) call the same families: rmsnorm, and GEMM
// with an epilogue and B as [k, n] (option dims given; bias and beta's C read), verified.
TEST(LibraryApi, TypedFunctionsCallTheFamilies) {
  kk::Context context(kk::Backend::cpu);
  const kk::Precision precision = kk::Precision::fp32;
  const auto device_copy = [&](const kk::ReferenceProblem& reference, const std::string& name) {
    void* memory = context.allocate(reference.bytes(name));
    context.copy_to_device(memory, reference.data(name), reference.bytes(name));
    return memory;
  };
  const auto check_output = [&](const kk::ReferenceProblem& reference, const std::string& name, void* memory) {
    std::vector<unsigned char> out(reference.bytes(name));
    context.copy_to_host(out.data(), memory, out.size());
    EXPECT_LE(reference.error(name, out.data()), reference.tolerance()) << name;
  };

  kk::ReferenceProblem rows("rmsnorm", {{"rows", 9}, {"cols", 250}}, precision, 5);
  void* x = device_copy(rows, "x");
  void* weight = device_copy(rows, "weight");
  void* out = device_copy(rows, "out");
  kk::rmsnorm(context, {.x = x, .weight = weight, .out = out}, {.rows = 9, .cols = 250}, precision);
  context.synchronize();
  check_output(rows, "out", out);

  kk::ReferenceProblem gemm("gemm", {{"m", 33}, {"n", 70}, {"k", 45}, {"b_layout", 1}, {"epilogue", 3}}, precision, 6);
  std::vector<void*> tensors;
  for (const std::string& name : gemm.tensor_names()) tensors.push_back(device_copy(gemm, name));
  const auto at = [&](const std::string& name) {
    const auto names = gemm.tensor_names();
    return tensors[std::size_t(std::find(names.begin(), names.end(), name) - names.begin())];
  };
  kk::gemm(context, {.a = at("a"), .b = at("b"), .c = at("c"), .bias = at("bias"), .scalars = at("scalars"), .d = at("d")},
           {.m = 33, .n = 70, .k = 45, .b_layout = 1, .epilogue = 3}, precision);
  context.synchronize();
  check_output(gemm, "d", at("d"));
}

TEST(LibraryApi, BadCallsAreTypedErrorsNamingTheArgument) {
  kk::Context context(kk::Backend::cpu);
  std::vector<float> x(64), w(16), y(64);
  const std::vector<kk::TensorArgument> tensors{{"x", x.data()}, {"weight", w.data()}, {"out", y.data()}};
  const std::vector<kk::DimArgument> dims{{"rows", 4}, {"cols", 16}};
  auto run = [&](std::string family, std::vector<kk::TensorArgument> t, std::vector<kk::DimArgument> d,
                 kk::Precision p) { return [=, &context] { context.run(family, t, d, p); }; };
  expect_error(run("rms_norm", tensors, dims, kk::Precision::fp32), kk::ErrorCode::bad_argument, "'rms_norm'");
  expect_error(run("rmsnorm", tensors, {{"rows", 4}}, kk::Precision::fp32), kk::ErrorCode::bad_argument, "'cols'");
  expect_error(run("rmsnorm", tensors, {{"rows", 4}, {"cols", 16}, {"depth", 2}}, kk::Precision::fp32),
               kk::ErrorCode::bad_argument, "'depth'");
  expect_error(run("rmsnorm", tensors, {{"rows", 0}, {"cols", 16}}, kk::Precision::fp32), kk::ErrorCode::bad_argument,
               "rows");
  expect_error(run("rmsnorm", {{"x", x.data()}, {"out", y.data()}}, dims, kk::Precision::fp32),
               kk::ErrorCode::bad_argument, "'weight'");
  expect_error(run("rmsnorm", {{"x", x.data()}, {"weight", nullptr}, {"out", y.data()}}, dims, kk::Precision::fp32),
               kk::ErrorCode::bad_argument, "'weight' is null");
  expect_error(run("rmsnorm", {{"x", x.data()}, {"w", w.data()}, {"out", y.data()}}, dims, kk::Precision::fp32),
               kk::ErrorCode::bad_argument, "'w'");
  expect_error(run("rmsnorm", tensors, dims, kk::Precision::fp8_e4m3), kk::ErrorCode::unsupported, "fp8_e4m3");
  expect_error([&] { context.tensor_bytes("rmsnorm", "z", {{"rows", 4}, {"cols", 16}}, kk::Precision::fp32); },
               kk::ErrorCode::bad_argument, "'z'");
  expect_error([] { kk::Context hip(kk::Backend::hip); }, kk::ErrorCode::no_device, "hip");
  EXPECT_EQ(context.tensor_bytes("rmsnorm", "x", {{"rows", 4}, {"cols", 16}}, kk::Precision::bf16), 128u);
}

// Shapes a family cannot take: a typed error saying why, from the call and from the reference.
TEST(LibraryApi, ShapesAFamilyCannotTakeAreTypedErrors) {
  kk::Context context(kk::Backend::cpu);
  std::vector<float> x(64), w(64), out(64), cos_sin(64);
  expect_error([&] {
    context.run("rmsnorm_rope", {{"x", x.data()}, {"weight", w.data()}, {"cos", cos_sin.data()}, {"sin", cos_sin.data()},
                                 {"out", out.data()}},
                {{"rows", 2}, {"heads", 1}, {"head_dim", 3}}, kk::Precision::fp32);
  }, kk::ErrorCode::unsupported, "head_dim");
  expect_error([] { kk::ReferenceProblem("rmsnorm_rope", {{"rows", 2}, {"heads", 1}, {"head_dim", 3}}, kk::Precision::fp32, 1); },
               kk::ErrorCode::bad_argument, "head_dim must be even");
  expect_error([&] { context.choose("gemm", {{"m", 4}, {"n", 4}, {"k", 4}, {"epilogue", 9}}, kk::Precision::fp32); },
               kk::ErrorCode::bad_argument, "epilogue");
}

}  // namespace

TEST(LibraryApi, UseConfigRunsTheGivenConfigAfterCheckingIt) {
  kk::Context context(kk::Backend::cpu);
  const std::vector<kk::DimArgument> dims{{"rows", 37}, {"cols", 1001}};
  const std::string given =
      R"({"rows_per_task": 4, "stats": "welford", "threads": 2, "unroll": 2, "vector_width": 4})";
  const kk::ConfigChoice choice = context.use_config("layernorm", dims, kk::Precision::fp32, given);
  EXPECT_EQ(choice.source, "given");
  EXPECT_EQ(choice.config, "threads=2 rows_per_task=4 vector_width=4 unroll=2 stats=welford");  // the space's order
  EXPECT_EQ(choice.config_json, R"({"rows_per_task":4,"stats":"welford","threads":2,"unroll":2,"vector_width":4})");
  // Later calls take it (choose says so) and still match the reference.
  EXPECT_EQ(context.choose("layernorm", dims, kk::Precision::fp32).config, choice.config);
  expect_cpu_call_matches_reference(context, "layernorm", dims, kk::Precision::fp32);
  // Other shapes and precisions keep the library's own choice.
  EXPECT_EQ(context.choose("layernorm", dims, kk::Precision::bf16).source, "default");

  auto use = [&](const std::string& config) { context.use_config("layernorm", dims, kk::Precision::fp32, config); };
  expect_error([&] { use("{"); }, kk::ErrorCode::bad_argument, "not JSON");
  expect_error([&] { use("[1]"); }, kk::ErrorCode::bad_argument, "JSON object");
  expect_error([&] { use(R"({"rows_per_task": 4, "stats": "welford", "threads": 2, "unroll": 2})"); },
               kk::ErrorCode::bad_argument, "'vector_width' is missing");
  expect_error([&] { use(R"({"rows_per_task": 4, "stats": "welford", "threads": 3, "unroll": 2, "vector_width": 4})"); },
               kk::ErrorCode::bad_argument, "threads=3 is not one of its values");
  expect_error(
      [&] { use(R"({"rows_per_task": 4, "stats": "welford", "threads": 2, "unroll": 2, "vector_width": 4, "x": 1})"); },
      kk::ErrorCode::bad_argument, "'x' is not a parameter");
  // Valid values that break a constraint at this shape: 37 rows in tasks of 64 give one task.
  expect_error([&] { use(R"({"rows_per_task": 64, "stats": "welford", "threads": 2, "unroll": 2, "vector_width": 4})"); },
               kk::ErrorCode::unsupported, "every_thread_gets_a_task");
  // A refused config leaves the given one in place.
  EXPECT_EQ(context.choose("layernorm", dims, kk::Precision::fp32).config, choice.config);
}
