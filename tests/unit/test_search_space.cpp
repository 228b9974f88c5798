// Search-space files and constrained enumeration, checked against a brute-force filter of the
// full Cartesian product.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/formats/t1/t1_space.hpp"

namespace ktune {
namespace {

nlohmann::json space_json() {
  return nlohmann::json::parse(R"json({
    "family": "demo", "backend": "cpu",
    "parameters": [
      {"name": "a", "values": [1, 2, 3, 4, 5, 6, 7, 8]},
      {"name": "b", "values": [1, 2, 4, 8, 16, 32]},
      {"name": "c", "values": [0, 1]},
      {"name": "mode", "values": ["x", "y"]},
      {"name": "d", "values": [1, 3, 5, 7, 9]}
    ],
    "constraints": [
      {"name": "small_product", "expr": "a * b <= limit"},
      "c == 0 or b % 4 == 0",
      "mode == 'x' or d > a",
      "(a + d) % 2 == 0 or rows % a == 0"
    ],
    "launch": {"tasks": "ceil_div(rows, a)"},
    "default": {"a": 2, "b": 4, "c": 1, "mode": "x", "d": 3}
  })json");
}

// Evaluates the constraints by hand for every point of the product.
std::size_t brute_force_count(std::int64_t limit, std::int64_t rows) {
  std::size_t count = 0;
  for (int a : {1, 2, 3, 4, 5, 6, 7, 8})
    for (int b : {1, 2, 4, 8, 16, 32})
      for (int c : {0, 1})
        for (const char* mode : {"x", "y"})
          for (int d : {1, 3, 5, 7, 9}) {
            const bool ok = a * b <= limit && (c == 0 || b % 4 == 0) && (std::string(mode) == "x" || d > a) &&
                            ((a + d) % 2 == 0 || rows % a == 0);
            count += ok;
          }
  return count;
}

TEST(SearchSpace, EnumerationMatchesBruteForce) {
  const SearchSpace space = SearchSpace::from_json(space_json(), "demo.json");
  EXPECT_EQ(space.total(), 8u * 6 * 2 * 2 * 5);
  for (std::int64_t limit : {1, 7, 16, 64, 1000})
    for (std::int64_t rows : {1, 12, 35, 840}) {
      const ValidConfigs valid = space.enumerate({{"limit", Value{limit}}, {"rows", Value{rows}}});
      EXPECT_EQ(valid.size(), brute_force_count(limit, rows)) << "limit=" << limit << " rows=" << rows;
      EXPECT_EQ(valid.total(), space.total());
      for (std::size_t i = 0; i < valid.size(); ++i)
        EXPECT_TRUE(space.violated(valid.config(i), {{"limit", Value{limit}}, {"rows", Value{rows}}}).empty());
    }
}

TEST(SearchSpace, ConfigsComeOutInParameterOrderAndAreFound) {
  const SearchSpace space = SearchSpace::from_json(space_json(), "demo.json");
  const ValidConfigs valid = space.enumerate({{"limit", Value{std::int64_t{64}}}, {"rows", Value{std::int64_t{12}}}});
  ASSERT_GT(valid.size(), 3u);
  const Config third = valid.config(2);
  ASSERT_EQ(third.values.size(), 5u);
  EXPECT_EQ(third.values[0].first, "a");
  EXPECT_EQ(third.values[4].first, "d");
  EXPECT_EQ(valid.find(third), std::optional<std::size_t>(2));
  ASSERT_TRUE(space.default_config().has_value());
  EXPECT_TRUE(valid.find(*space.default_config()).has_value());
}

TEST(SearchSpace, ConstraintWithoutParametersEmptiesTheSpace) {
  auto json = space_json();
  json["constraints"].push_back("rows > 100");
  const SearchSpace space = SearchSpace::from_json(json, "demo.json");
  EXPECT_EQ(space.enumerate({{"limit", Value{std::int64_t{64}}}, {"rows", Value{std::int64_t{12}}}}).size(), 0u);
  EXPECT_GT(space.enumerate({{"limit", Value{std::int64_t{64}}}, {"rows", Value{std::int64_t{840}}}}).size(), 0u);
}

TEST(SearchSpace, PruningAvoidsTheCartesianProduct) {
  // 10^8 raw configs; the first constraint leaves one value of the first parameter, so a walk
  // that prunes early visits about 10^7 leaves at most and finishes quickly.
  nlohmann::json json = {{"family", "big"}, {"backend", "cpu"}, {"parameters", nlohmann::json::array()}};
  for (int p = 0; p < 8; ++p) {
    nlohmann::json values = nlohmann::json::array();
    for (int v = 0; v < 10; ++v) values.push_back(v);
    json["parameters"].push_back({{"name", "p" + std::to_string(p)}, {"values", values}});
  }
  json["constraints"] = {"p0 == 3", "p1 == p0", "p2 < 2", "p3 + p4 == 9"};
  const SearchSpace space = SearchSpace::from_json(json, "big.json");
  const ValidConfigs valid = space.enumerate({});
  EXPECT_EQ(valid.total(), 100000000u);
  EXPECT_EQ(valid.size(), 1u * 1 * 2 * 10 * 1000);
}

TEST(SearchSpace, LaunchGeometryIsDerived) {
  const SearchSpace space = SearchSpace::from_json(space_json(), "demo.json");
  const auto geometry = space.launch(*space.default_config(), {{"limit", Value{std::int64_t{64}}},
                                                               {"rows", Value{std::int64_t{7}}}});
  EXPECT_EQ(std::get<std::int64_t>(geometry.at("tasks")), 4);
}

// Constraints read derived values and launch values by name, however the names refer to each
// other; names inside string literals and function names are left alone.
TEST(SearchSpace, ConstraintsReadDerivedAndLaunchValues) {
  const auto json = nlohmann::json::parse(R"json({
    "family": "demo", "backend": "cpu",
    "parameters": [{"name": "a", "values": [1, 2, 3, 4, 5, 6, 7, 8]}, {"name": "mode", "values": ["a", "tasks"]}],
    "derived": {"a_squared": "twice_a * twice_a // 4", "twice_a": "2 * a", "max": "100"},
    "constraints": [
      {"name": "few_tasks", "expr": "tasks <= 3"},
      {"name": "small_square", "expr": "a_squared <= max(max, 49) and mode != 'tasks'"}
    ],
    "launch": {"tasks": "ceil_div(rows, twice_a)", "a": "a"}
  })json");
  const SearchSpace space = SearchSpace::from_json(json, "demo.json");
  const ValidConfigs valid = space.enumerate({{"rows", Value{std::int64_t{20}}}});
  // tasks = ceil(20 / 2a) <= 3 needs a >= 4; a² <= 100 holds for every a; mode 'tasks' is a string.
  ASSERT_EQ(valid.size(), 5u);
  for (std::size_t i = 0; i < valid.size(); ++i) {
    EXPECT_GE(valid.config(i).get_int("a"), 4);
    EXPECT_EQ(std::get<std::string>(valid.config(i).at("mode")), "a");
  }
  Config config{{{"a", Value{std::int64_t{3}}}, {"mode", Value{std::string("a")}}}};
  EXPECT_EQ(space.violated(config, {{"rows", Value{std::int64_t{20}}}}), std::vector<std::string>{"few_tasks"});
  EXPECT_EQ(std::get<std::int64_t>(space.launch(config, {{"rows", Value{std::int64_t{20}}}}).at("tasks")), 4);
}

TEST(SearchSpace, DerivedValuesThatLoopOrShadowAParameterAreInputErrors) {
  auto expect_error = [](const char* text, const std::string& fragment) {
    try {
      SearchSpace::from_json(nlohmann::json::parse(text), "bad.json");
      ADD_FAILURE() << "no error for " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"family": "f", "backend": "cpu", "parameters": [{"name": "a", "values": [1]}],
                   "derived": {"x": "y + 1", "y": "x * a"}, "constraints": ["x > 0"]})",
               "refer to themselves");
  nlohmann::json doubling = nlohmann::json::parse(R"({"family": "f", "backend": "cpu",
                                                      "parameters": [{"name": "a", "values": [1]}], "constraints": ["d0 > 0"]})");
  for (int i = 0; i < 40; ++i)
    doubling["derived"]["d" + std::to_string(i)] = "d" + std::to_string(i + 1) + " + d" + std::to_string(i + 1);
  doubling["derived"]["d40"] = "a";
  expect_error(doubling.dump().c_str(), "expand past");
  expect_error(R"({"family": "f", "backend": "cpu", "parameters": [{"name": "a", "values": [1]}],
                   "derived": {"a": "2"}})",
               "bad.json.derived.a: a parameter has this name");
  expect_error(R"({"family": "f", "backend": "cpu", "parameters": [{"name": "a", "values": [1]}],
                   "derived": {"x": "a +"}})",
               "bad.json.derived.x");
  expect_error(R"({"family": "f", "backend": "cpu", "parameters": [{"name": "a", "values": [1]}],
                   "derived": {"x": "a"}, "launch": {"x": "a"}})",
               "bad.json.launch.x: also the name of a derived value");
  expect_error(R"({"family": "f", "backend": "cpu", "parameters": [{"name": "a", "values": [1]}],
                   "derived": 3})",
               "bad.json.derived: expected an object");
}

TEST(SearchSpace, BadFilesNameTheProblem) {
  auto expect_error = [](nlohmann::json json, const std::string& fragment) {
    try {
      SearchSpace::from_json(json, "bad.json");
      ADD_FAILURE() << "no error for " << json.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  auto json = space_json();
  json.erase("family");
  expect_error(json, "bad.json: missing required key \"family\"");
  json = space_json();
  json["parameters"][1]["values"] = nlohmann::json::array();
  expect_error(json, "bad.json.parameters[1].values");
  json = space_json();
  json["constraints"][2] = "mode == 'x' or (d > a";
  expect_error(json, "constraints[2]");
  json = space_json();
  json["default"]["b"] = 3;
  expect_error(json, "bad.json.default.b: 3 is not one of");
  json = space_json();
  json["parameters"].push_back({{"name", "a"}, {"values", {1}}});
  expect_error(json, "duplicate parameter 'a'");
}

TEST(SearchSpace, StartingPointsKeepTheirOrderAndAreCheckedLikeTheDefault) {
  auto json = space_json();
  json["starting_points"] = nlohmann::json::parse(R"([{"d": 5, "mode": "y", "c": 0, "b": 8, "a": 4},
                                                      {"a": 1, "b": 1, "c": 0, "mode": "x", "d": 1}])");
  const SearchSpace space = SearchSpace::from_json(json, "demo.json");
  ASSERT_EQ(space.starting_points().size(), 2u);
  EXPECT_EQ(space.starting_points()[0].key(), R"({"a":4,"b":8,"c":0,"d":5,"mode":"y"})");
  EXPECT_EQ(space.starting_points()[1].key(), R"({"a":1,"b":1,"c":0,"d":1,"mode":"x"})");
  std::vector<std::string> names;  // in the parameters' order, as the default
  for (const auto& [name, value] : space.starting_points()[0].values) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "mode", "d"}));
  EXPECT_TRUE(SearchSpace::from_json(space_json(), "demo.json").starting_points().empty());

  auto expect_error = [](const nlohmann::json& bad, const std::string& fragment) {
    try {
      SearchSpace::from_json(bad, "bad.json");
      ADD_FAILURE() << "no error for " << bad.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  auto bad = json;
  bad["starting_points"][1]["b"] = 3;
  expect_error(bad, "bad.json.starting_points[1].b: 3 is not one of");
  bad = json;
  bad["starting_points"][0].erase("mode");
  expect_error(bad, "bad.json.starting_points[0]: no value for parameter 'mode'");
  bad = json;
  bad["starting_points"][0]["e"] = 1;
  expect_error(bad, "bad.json.starting_points[0]: names a parameter the space does not have");
  bad = json;
  bad["starting_points"] = json["starting_points"][0];
  expect_error(bad, "bad.json.starting_points: expected an array");
}

TEST(SearchSpace, UnknownNameInConstraintIsReportedAtEnumeration) {
  const SearchSpace space = SearchSpace::from_json(space_json(), "demo.json");
  EXPECT_THROW(space.enumerate({{"rows", Value{std::int64_t{12}}}}), InputError);  // no "limit"
}

TEST(SearchSpace, ShippedSpacesLoadAndHaveValidDefaults) {
  for (const char* name : {"rmsnorm.cpu.json", "swiglu.cpu.json"}) {
    const SearchSpace space = SearchSpace::load(std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / name);
    const SpaceContext context{{"rows", Value{std::int64_t{2048}}}, {"cols", Value{std::int64_t{4096}}},
                               {"hardware_threads", Value{std::int64_t{2}}}};
    const ValidConfigs valid = space.enumerate(context);
    EXPECT_GT(valid.size(), 50u) << name;
    ASSERT_TRUE(space.default_config()) << name;
    EXPECT_TRUE(space.violated(*space.default_config(), context).empty()) << name;
  }
}

TEST(SearchSpace, T1SpecsMatchKernelTunerCounts) {
  // Kernel Tuner's caches of these specs hold every valid config; the counts must agree.
  const std::filesystem::path data = KTUNE_SHARED_DATA_DIR;
  if (!std::filesystem::exists(data / "kernel_tuner_caches/convolution_milo_T1.json")) GTEST_SKIP() << "no shared data";
  const SearchSpace convolution = load_t1_space(data / "kernel_tuner_caches/convolution_milo_T1.json");
  const ValidConfigs valid = convolution.enumerate({});
  EXPECT_EQ(valid.total(), 10240u);
  EXPECT_EQ(valid.size(), 4362u);  // entries in convolution_milo_A100.json.gz, all valid configs
  const SearchSpace dedispersion = load_t1_space(data / "kernel_tuner_caches/dedispersion_milo_T1.json");
  EXPECT_EQ(dedispersion.enumerate({}).total(), 22272u);
  EXPECT_EQ(dedispersion.enumerate({}).size(), 11130u);  // entries in dedispersion_milo_A100.json.gz
}

}  // namespace
}  // namespace ktune

namespace ktune {
namespace {

// T1 files come from other tools: every malformed shape is an InputError naming what was
// expected (found by fuzzing the reader with tests/fuzz/fuzz_t1_space.cpp).
TEST(T1Space, MalformedSpecsAreInputErrors) {
  const auto message_of = [](const char* text) {
    try {
      t1_space_from_json(nlohmann::json::parse(text), "spec.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of(R"([1, 2])").find("not a T1 spec"), std::string::npos);
  EXPECT_NE(message_of(R"({"ConfigurationSpace": 3})").find("not a T1 spec"), std::string::npos);
  EXPECT_NE(message_of(R"({"ConfigurationSpace": {"TuningParameters": {}}})").find("must be an array"),
            std::string::npos);
  EXPECT_NE(message_of(R"({"ConfigurationSpace": {"TuningParameters": [7]}})").find("TuningParameters[0]"),
            std::string::npos);
  EXPECT_NE(message_of(R"({"ConfigurationSpace": {"TuningParameters": [{"Name": 5, "Values": [1]}]}})")
                .find("missing Name"),
            std::string::npos);
  EXPECT_NE(message_of(R"({"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Values": [1]}],
                           "Conditions": [{"Expression": 4}]}})")
                .find("Conditions[0]"),
            std::string::npos);
  EXPECT_NE(message_of(R"({"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Values": [1]}]},
                           "KernelSpecification": {"LocalSize": {"X": "x"}, "GlobalSizeType": [1000]}})")
                .find("GlobalSizeType"),
            std::string::npos);
  // Names given in the wrong type fall back to defaults instead of failing.
  const SearchSpace space = t1_space_from_json(
      nlohmann::json::parse(R"({"General": 1, "KernelSpecification": {"Language": 2},
                                "ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Values": "[1, 2]"}]}})"),
      "spec.json");
  EXPECT_EQ(space.family(), "t1");
  EXPECT_EQ(space.parameters().at(0).values.size(), 2u);
}

}  // namespace
}  // namespace ktune

namespace ktune {
namespace {

// Found by fuzzing (tests/fuzz/corpus/fuzz_search_space/finding-*): optional members of the
// wrong type escaped as JSON type errors instead of InputErrors naming the member.
TEST(SearchSpace, OptionalMembersOfTheWrongTypeAreInputErrors) {
  const auto message_of = [](const char* text) {
    try {
      SearchSpace::from_json(nlohmann::json::parse(text), "space.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of(R"({"family": "f", "backend": "cpu", "parameters": [{"name": "x", "values": [1]}],
                           "constraints": [{"name": [0, 2], "expr": "x > 0"}]})")
                .find("space.json.constraints[0].name: expected a string"),
            std::string::npos);
  EXPECT_NE(message_of(R"({"family": "f", "backend": "cpu", "parameters": [{"name": "x", "values": [1], "help": 3}]})")
                .find("space.json.parameters[0].help: expected a string"),
            std::string::npos);
}

}  // namespace
}  // namespace ktune
