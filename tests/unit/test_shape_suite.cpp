// Shape suites (search_spaces/suites/*.json): what a suite file turns into, every way a file can
// be wrong (InputError naming the file and the entry), and the shipped suites.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "input_error_expectations.hpp"
#include "kernels/family.hpp"
#include "tuner/backends/cpu/cpu_device.hpp"
#include "tuner/bench/shape_suite.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/core/space_context.hpp"
#include "tuner/tune/space_files.hpp"

namespace ktune {
namespace {

const std::filesystem::path kSuiteDir = std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / "suites";

// A suite file's text with `shapes` (a JSON object's text) and `precisions` (an array's text).
std::string suite_text(const std::string& shapes, const std::string& precisions = R"(["fp32"])") {
  return R"({"suite": "small", "description": "test", "precisions": )" + precisions + R"(, "shapes": )" + shapes + "}";
}

std::string error_parsing(const std::string& text) {
  return error_of([&] { parse_shape_suite(text, "suites/small.json"); });
}

// The message starts with the file, so a user with several suites knows which one is wrong.
void expect_names_the_file(const std::string& message) {
  EXPECT_EQ(message.rfind("suites/small.json: ", 0), 0u) << "message: " << message;
}

TEST(ShapeSuite, EntriesFollowTheFileFamilyThenShapeThenPrecision) {
  const ShapeSuite suite = parse_shape_suite(
      suite_text(R"({"swiglu": [{"rows": 8, "cols": 64}], "rmsnorm": [{"rows": 4, "cols": 32}, {"cols": 16}]})",
                 R"(["bf16", "fp32"])"),
      "suites/small.json");
  EXPECT_EQ(suite.name, "small");
  EXPECT_EQ(suite.description, "test");
  EXPECT_EQ(suite.file, "suites/small.json");
  std::vector<std::string> got;
  for (const SuiteEntry& entry : suite.entries) {
    EXPECT_EQ(entry.problem.family, entry.family);
    got.push_back(entry.family + ":" + entry.problem.key());
  }
  // A dim left out takes the family's default (rmsnorm's rows).
  const std::string default_rows = std::to_string(find_family("rmsnorm").make_problem({}, Precision::fp32).dim("rows"));
  EXPECT_EQ(got, (std::vector<std::string>{"swiglu:rows=8,cols=64;bf16", "swiglu:rows=8,cols=64;fp32",
                                           "rmsnorm:rows=4,cols=32;bf16", "rmsnorm:rows=4,cols=32;fp32",
                                           "rmsnorm:rows=" + default_rows + ",cols=16;bf16",
                                           "rmsnorm:rows=" + default_rows + ",cols=16;fp32"}));
}

TEST(ShapeSuite, NotValidJsonOrNotAnObject) {
  for (const std::string text : {"{\"suite\": ", "[1, 2]", "\"transformer\""}) {
    const std::string message = error_parsing(text);
    expect_names_the_file(message);
  }
  EXPECT_MENTIONS(error_parsing("{\"suite\": "), "not valid JSON");
  EXPECT_MENTIONS(error_parsing("[1, 2]"), "must be a JSON object");
}

TEST(ShapeSuite, MissingOrWrongTopLevelMembers) {
  const std::string no_name = error_parsing(R"({"precisions": ["fp32"], "shapes": {"rmsnorm": [{}]}})");
  expect_names_the_file(no_name);
  EXPECT_MENTIONS(no_name, "\"suite\"");
  const std::string no_precisions = error_parsing(R"({"suite": "s", "shapes": {"rmsnorm": [{}]}})");
  expect_names_the_file(no_precisions);
  EXPECT_MENTIONS(no_precisions, "\"precisions\" must be a non-empty array");
  EXPECT_MENTIONS(error_parsing(suite_text(R"({"rmsnorm": [{}]})", "[]")), "\"precisions\" must be a non-empty array");
}

TEST(ShapeSuite, AnEntryThatIsNotAnObjectIsNamed) {
  const std::string message = error_parsing(suite_text(R"({"rmsnorm": [{"rows": 4, "cols": 32}, [4, 32]]})"));
  expect_names_the_file(message);
  EXPECT_MENTIONS(message, R"("shapes"."rmsnorm"[1] must be an object)");
  // The family's value itself must be an array of shapes.
  const std::string not_array = error_parsing(suite_text(R"({"rmsnorm": {"rows": 4}})"));
  expect_names_the_file(not_array);
  EXPECT_MENTIONS(not_array, R"("shapes"."rmsnorm" must be a non-empty array)");
}

TEST(ShapeSuite, UnknownFamilyListsTheValidOnes) {
  const std::string message = error_parsing(suite_text(R"({"rmsnorm": [{}], "rmsnrom": [{"rows": 4}]})"));
  expect_names_the_file(message);
  EXPECT_MENTIONS(message, "\"shapes\"");
  EXPECT_MENTIONS(message, "'rmsnrom'");
  EXPECT_MENTIONS(message, "valid kernels: ");
  for (const KernelFamily* family : all_families()) EXPECT_MENTIONS(message, family->name());
}

TEST(ShapeSuite, BadDimNameNamesTheEntryAndTheFamilysDims) {
  const std::string message = error_parsing(suite_text(R"({"rmsnorm": [{"rows": 4, "cols": 32}, {"rows": 4, "colz": 32}]})"));
  expect_names_the_file(message);
  EXPECT_MENTIONS(message, R"("shapes"."rmsnorm"[1])");
  EXPECT_MENTIONS(message, "'colz'");
  EXPECT_MENTIONS(message, "rows, cols");
  // No --shape was given: the message must not blame a command-line option.
  EXPECT_EQ(message.find("--shape"), std::string::npos) << message;
}

TEST(ShapeSuite, DimValuesMustBePositiveWholeNumbers) {
  for (const std::string value : {"4.5", "\"4\"", "true", "null", "[4]"}) {
    const std::string message = error_parsing(suite_text(R"({"rmsnorm": [{"rows": )" + value + R"(, "cols": 32}]})"));
    expect_names_the_file(message);
    EXPECT_MENTIONS(message, R"("shapes"."rmsnorm"[0].rows must be a whole number)");
  }
  const std::string zero = error_parsing(suite_text(R"({"softmax": [{"rows": 0, "cols": 32}]})"));
  expect_names_the_file(zero);
  EXPECT_MENTIONS(zero, R"("shapes"."softmax"[0])");
  EXPECT_MENTIONS(zero, "rows=0 must be at least 1");
}

TEST(ShapeSuite, EmptyShapesAreRefused) {
  for (const std::string shapes : {"{}", R"({"rmsnorm": []})", "[]", R"("rmsnorm")"}) {
    const std::string message = error_parsing(suite_text(shapes));
    expect_names_the_file(message);
    EXPECT_MENTIONS(message, "\"shapes\"");
    EXPECT_MENTIONS(message, "non-empty");
  }
  const std::string missing = error_parsing(R"({"suite": "s", "precisions": ["fp32"]})");
  expect_names_the_file(missing);
  EXPECT_MENTIONS(missing, "\"shapes\" must be a non-empty object");
}

TEST(ShapeSuite, BadPrecisionListsTheValidOnes) {
  for (const std::string precisions : {R"(["fp33"])", R"(["fp32", "FP16"])", "[16]"}) {
    const std::string message = error_parsing(suite_text(R"({"rmsnorm": [{}]})", precisions));
    expect_names_the_file(message);
    EXPECT_MENTIONS(message, "\"precisions\"");
    EXPECT_MENTIONS(message, "fp32, fp16, bf16");
  }
  const std::string twice = error_parsing(suite_text(R"({"rmsnorm": [{}]})", R"(["fp32", "fp32"])"));
  expect_names_the_file(twice);
  EXPECT_MENTIONS(twice, "listed twice");
}

TEST(ShapeSuite, TheSameProblemTwiceIsRefused) {
  // Both would be timed under one benchmark name; the bench's database refuses that mid-run.
  const std::string message =
      error_parsing(suite_text(R"({"rmsnorm": [{"rows": 4, "cols": 32}, {"rows": 8, "cols": 32}, {"cols": 32, "rows": 4}]})"));
  expect_names_the_file(message);
  EXPECT_MENTIONS(message, R"("shapes"."rmsnorm"[2] is the same problem as "shapes"."rmsnorm"[0])");
  // The same shape under two families is two problems.
  EXPECT_EQ(parse_shape_suite(suite_text(R"({"rmsnorm": [{"rows": 4, "cols": 32}], "softmax": [{"rows": 4, "cols": 32}]})"),
                              "suites/small.json")
                .entries.size(),
            2u);
}

class TestFamilies : public ::testing::Test {
 protected:
  void SetUp() override { setenv("KTUNE_ENABLE_TEST_FAMILIES", "1", 1); }
  void TearDown() override { unsetenv("KTUNE_ENABLE_TEST_FAMILIES"); }
};

TEST_F(TestFamilies, PrecisionsAFamilyLacksAreSkippedForIt) {
  // fault_injection is fp32 only; rmsnorm has all three.
  const ShapeSuite suite = parse_shape_suite(
      suite_text(R"({"fault_injection": [{"n": 64}, {"n": 128}], "rmsnorm": [{"rows": 4, "cols": 32}]})",
                 R"(["bf16", "fp32", "fp16"])"),
      "suites/small.json");
  std::vector<std::string> got;
  for (const SuiteEntry& entry : suite.entries) got.push_back(entry.family + ":" + entry.problem.key());
  EXPECT_EQ(got, (std::vector<std::string>{"fault_injection:n=64,setup_ms=1;fp32", "fault_injection:n=128,setup_ms=1;fp32",
                                           "rmsnorm:rows=4,cols=32;bf16", "rmsnorm:rows=4,cols=32;fp32",
                                           "rmsnorm:rows=4,cols=32;fp16"}));
}

TEST_F(TestFamilies, AFamilyThatSupportsNoneOfThePrecisionsIsRefusedNotDropped) {
  const std::string message =
      error_parsing(suite_text(R"({"rmsnorm": [{}], "fault_injection": [{"n": 64}]})", R"(["bf16", "fp16"])"));
  expect_names_the_file(message);
  EXPECT_MENTIONS(message, R"("shapes"."fault_injection")");
  EXPECT_MENTIONS(message, "supports none of the suite's \"precisions\"; it supports fp32");
}

TEST(ShapeSuite, LoadNamesTheValidSuitesForAnUnknownName) {
  const std::string message = error_of([] { load_shape_suite("transfromer"); });
  EXPECT_MENTIONS(message, "no suite named 'transfromer'");
  EXPECT_MENTIONS(message, "valid suites: transformer, transformer_cpu");
  const std::string missing_file = error_of([] { load_shape_suite("no/such/suite.json"); });
  EXPECT_MENTIONS(missing_file, "no/such/suite.json");
}

// A device with an H200's limits, for the GPU suite's shapes against the CUDA spaces.
DeviceInfo hopper() {
  DeviceInfo device;
  device.limits = {{"max_threads_per_block", 1024}, {"max_shared_memory_per_block", 232448}, {"sm_count", 132},
                   {"max_shared_memory_per_multiprocessor", 233472},
                   {"l2_bytes", 52428800},          {"warp_size", 32},                       {"max_cluster_size", 8}};
  return device;
}

// Every shipped suite loads (by name and by path, alike), each family's dims are its own, each
// entry remakes into the same problem, and the backend the suite is for can run each entry's
// default config (what bench runs when nothing was tuned).
TEST(ShapeSuite, ShippedSuitesLoadAndEveryEntryIsAValidProblem) {
  const std::map<std::string, std::pair<std::string, DeviceInfo>> backend_of{
      {"transformer", {"cuda", hopper()}}, {"transformer_cpu", {"cpu", describe_host_cpu()}}};
  int suites = 0;
  for (const auto& file : std::filesystem::directory_iterator(kSuiteDir)) {
    if (file.path().extension() != ".json") continue;
    ++suites;
    const std::string name = file.path().stem().string();
    SCOPED_TRACE(file.path().string());
    const ShapeSuite suite = load_shape_suite(file.path().string());
    EXPECT_EQ(suite.name, name);
    EXPECT_FALSE(suite.description.empty());
    EXPECT_EQ(load_shape_suite(name).entries.size(), suite.entries.size());
    ASSERT_FALSE(suite.entries.empty());
    ASSERT_TRUE(backend_of.count(name)) << "a new suite: say which backend it is for";
    const auto& [backend, device] = backend_of.at(name);

    std::set<std::string> keys, families;
    for (const SuiteEntry& entry : suite.entries) {
      SCOPED_TRACE(entry.family + " " + entry.problem.describe());
      const KernelFamily& family = find_family(entry.family);
      families.insert(entry.family);
      EXPECT_EQ(entry.problem.family, entry.family);
      ASSERT_EQ(entry.problem.dims.size(), family.dims().size());
      std::map<std::string, std::int64_t> dims;
      for (std::size_t d = 0; d < entry.problem.dims.size(); ++d) {
        EXPECT_EQ(entry.problem.dims[d].first, family.dims()[d].name);
        EXPECT_GE(entry.problem.dims[d].second, 1);
        dims[entry.problem.dims[d].first] = entry.problem.dims[d].second;
      }
      EXPECT_EQ(family.make_problem(dims, entry.problem.precision).key(), entry.problem.key());
      EXPECT_TRUE(keys.insert(entry.family + ";" + entry.problem.key()).second) << "listed twice";
      EXPECT_GT(family.byte_count(entry.problem), 0);

      const SearchSpace space = SearchSpace::load(default_space_file(entry.family, backend));
      ASSERT_TRUE(space.default_config());
      const SpaceContext context = make_context(entry.problem, device);
      EXPECT_TRUE(space.violated(*space.default_config(), context).empty()) << space.source();
    }
    EXPECT_GE(families.size(), 2u);
  }
  EXPECT_EQ(suites, 2);
}

}  // namespace
}  // namespace ktune
