// JSON as Python writes it (the text of Kernel Tuner's files) and gzip through zlib.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "tests/unit/input_error_expectations.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/formats/data_file.hpp"
#include "tuner/formats/gzip.hpp"
#include "tuner/formats/python_json.hpp"

namespace ktune {
namespace {

TEST(PythonJson, FloatReprMatchesPython) {
  // Expected texts are Python 3.11's repr() of the same doubles.
  const struct {
    double value;
    const char* repr;
  } cases[] = {
      {0.1, "0.1"},
      {1.0, "1.0"},
      {3.8753279224038124, "3.8753279224038124"},
      {1e-05, "1e-05"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1e+16, "1e+16"},
      {1234567890123456.0, "1234567890123456.0"},
      {1.2345678901234568e+16, "1.2345678901234568e+16"},
      {5e-324, "5e-324"},
      {1.7976931348623157e+308, "1.7976931348623157e+308"},
      {-2.5, "-2.5"},
      {100.0, "100.0"},
      {123456789.123, "123456789.123"},
      {0.30000000000000004, "0.30000000000000004"},
      {9.5367431640625e-07, "9.5367431640625e-07"},
      {1e+22, "1e+22"},
      {9007199254740992.0, "9007199254740992.0"},
      {-0.0, "-0.0"},
      {0.0, "0.0"},
  };
  for (const auto& c : cases) EXPECT_EQ(python_float_repr(c.value), c.repr) << c.repr;
  EXPECT_EQ(python_float_repr(std::nan("")), "NaN");
  EXPECT_EQ(python_float_repr(HUGE_VAL), "Infinity");
  EXPECT_EQ(python_float_repr(-HUGE_VAL), "-Infinity");
}

TEST(PythonJson, DumpsLikeJsonDumps) {
  const auto value = nlohmann::ordered_json::parse(R"({"a": [1, 2.5, {"b": "x"}], "c": {}, "d": []})");
  // json.dumps(value) and json.dumps(value, indent=2), from Python.
  EXPECT_EQ(dump_python_json(value), R"({"a": [1, 2.5, {"b": "x"}], "c": {}, "d": []})");
  EXPECT_EQ(dump_python_json(value, "  "),
            "{\n  \"a\": [\n    1,\n    2.5,\n    {\n      \"b\": \"x\"\n    }\n  ],\n  \"c\": {},\n  \"d\": []\n}");
}

TEST(PythonJson, ReadsAndWritesPythonLiteralsAndEscapes) {
  // json.dumps(..., indent="") from Python, with non-ASCII text and the non-standard literals.
  const std::string python_text =
      "{\n\"a\": [\n1,\n2.5,\n{\n\"b\": \"\\u00e9\\u2603\\ud83d\\ude00\\u007f\\n\\t\\\"\\\\\"\n}\n],\n\"c\": {},\n"
      "\"d\": [],\n\"e\": NaN,\n\"f\": Infinity,\n\"g\": -Infinity,\n\"h\": null,\n\"i\": true\n}";
  const nlohmann::ordered_json value = parse_python_json(python_text, "literals.json");
  EXPECT_TRUE(std::isnan(value["e"].get<double>()));
  EXPECT_EQ(value["f"].get<double>(), HUGE_VAL);
  EXPECT_EQ(value["g"].get<double>(), -HUGE_VAL);
  EXPECT_EQ(value["a"][2]["b"].get<std::string>(), "\u00e9\u2603\U0001F600\x7f\n\t\"\\");
  EXPECT_EQ(dump_python_json(value, ""), python_text);
}

TEST(PythonJson, LiteralsInsideStringsStayText) {
  const auto value = parse_python_json(R"({"note": "NaN and Infinity", "x": [NaN]})", "strings.json");
  EXPECT_EQ(value["note"].get<std::string>(), "NaN and Infinity");
  EXPECT_TRUE(std::isnan(value["x"][0].get<double>()));
}

TEST(PythonJson, BadInputNamesTheSource) {
  EXPECT_NE(error_of([] { (void)parse_python_json("{\"a\": ", "broken.json"); }).find("broken.json: not valid JSON"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)parse_python_json("1e999", "huge.json"); }).find("huge.json"), std::string::npos);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(error_of([&] { (void)parse_python_json(deep, "deep.json"); }).find("deep.json: nested more than 64"),
            std::string::npos);
}

TEST(Gzip, RoundTripAndDetection) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "\"" + std::to_string(i) + "\": {\"time\": 1.5},\n";
  const std::string packed = gzip(text);
  EXPECT_TRUE(is_gzip(packed));
  EXPECT_FALSE(is_gzip(text));
  EXPECT_LT(packed.size(), text.size() / 5);
  EXPECT_EQ(gunzip(packed, "mem.gz"), text);
  EXPECT_EQ(gzip(text), packed) << "the same text must compress to the same bytes";
  EXPECT_EQ(text_maybe_gzip(packed, "mem.gz"), text_maybe_gzip(text, "mem.json"));
  // Concatenated members are one valid file, as with gzip(1).
  EXPECT_EQ(gunzip(gzip("ab") + gzip("cd"), "two.gz"), "abcd");
  EXPECT_EQ(gunzip(gzip(""), "empty.gz"), "");
}

TEST(Gzip, DamageIsAnInputErrorNamingTheFile) {
  const std::string packed = gzip(std::string(100000, 'x') + "tail");
  EXPECT_NE(error_of([&] { (void)gunzip(packed.substr(0, packed.size() / 2), "cut.json.gz"); })
                .find("cut.json.gz: the gzip data ends early"),
            std::string::npos);
  std::string corrupt = packed;
  corrupt[corrupt.size() - 6] ^= 0x55;  // inside the CRC-32 trailer
  EXPECT_NE(error_of([&] { (void)gunzip(corrupt, "crc.json.gz"); }).find("crc.json.gz: corrupt gzip data"),
            std::string::npos);
  EXPECT_NE(error_of([&] { (void)gunzip(packed + "garbage", "tail.json.gz"); }).find("tail.json.gz"), std::string::npos);
  EXPECT_NE(error_of([] { (void)gunzip("\x1f\x8b", "magic-only.gz"); }).find("magic-only.gz"), std::string::npos);
}

TEST(Gzip, DecompressionIsCapped) {
  // 64 MiB of zeros compress to about 64 KiB: a small bomb against a 1 MiB cap.
  const std::string bomb = gzip(std::string(std::size_t{64} << 20, '\0'));
  EXPECT_NE(error_of([&] { (void)gunzip(bomb, "bomb.gz", std::size_t{1} << 20); }).find("bomb.gz: decompresses to more than 1 MiB"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)text_maybe_gzip(std::string(2048, ' '), "big.json", 1024); }).find("big.json"),
            std::string::npos);
}

}  // namespace
}  // namespace ktune
