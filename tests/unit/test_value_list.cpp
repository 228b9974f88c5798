// T1 parameter Values written as Python list expressions, checked against what Python itself
// gives for each (the expected lists below are Python 3's output for the same text).
#include <gtest/gtest.h>

#include "tuner/core/errors.hpp"
#include "tuner/formats/t1/value_list.hpp"

namespace ktune {
namespace {

std::vector<Value> ints(std::initializer_list<std::int64_t> values) {
  std::vector<Value> out;
  for (const auto v : values) out.push_back(Value{v});
  return out;
}

std::vector<Value> list(const char* text) { return evaluate_value_list(text, "spec.json"); }

std::string error_of(const char* text) {
  try {
    list(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ValueList, LiteralsAndElementExpressions) {
  EXPECT_EQ(list("[1, 2, 4]"), ints({1, 2, 4}));
  EXPECT_EQ(list("[2**5, 3*32, -1, +7, 10//3]"), ints({32, 96, -1, 7, 3}));
  EXPECT_EQ(list("(1, 2)"), ints({1, 2}));
  EXPECT_EQ(list("[1, 2,]"), ints({1, 2}));
  EXPECT_EQ(list("[]"), ints({}));
  EXPECT_EQ(list("[0.5, 1e+3]"), (std::vector<Value>{Value{0.5}, Value{1000.0}}));
  EXPECT_EQ(list("['a', \"b+c\"]"), (std::vector<Value>{Value{std::string("a")}, Value{std::string("b+c")}}));
}

TEST(ValueList, RangesAndList) {
  EXPECT_EQ(list("range(4)"), ints({0, 1, 2, 3}));
  EXPECT_EQ(list("list(range(1, 5))"), ints({1, 2, 3, 4}));
  EXPECT_EQ(list("range(64, 0, -16)"), ints({64, 48, 32, 16}));
  EXPECT_EQ(list("range(5, 1)"), ints({}));
  EXPECT_EQ(list("list(range(2*2, 2**4, 4))"), ints({4, 8, 12}));
}

TEST(ValueList, Comprehensions) {
  EXPECT_EQ(list("[2**i for i in range(0, 6)]"), ints({1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(list("[32*i for i in range(1, 9) if i % 2 == 0]"), ints({64, 128, 192, 256}));
  EXPECT_EQ(list("[x + 1 for x in [1, 2] + [10]]"), ints({2, 3, 11}));
  EXPECT_EQ(list("list([i for i in range(3)])"), ints({0, 1, 2}));
  EXPECT_EQ(list("[index for index in range(3) if index in [0, 2]]"), ints({0, 2}));
}

TEST(ValueList, Concatenation) {
  EXPECT_EQ(list("[1, 2] + list(range(4, 9, 4)) + [2**i for i in range(4, 6)]"), ints({1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(list("[1+1, 3] + [4]"), ints({2, 3, 4}));
}

TEST(ValueList, ErrorsNameTheTextAndTheProblem) {
  EXPECT_NE(error_of("range(1, 2, 0)").find("step must not be zero"), std::string::npos);
  EXPECT_NE(error_of("range(1.5)").find("whole numbers"), std::string::npos);
  EXPECT_NE(error_of("42").find("is not a list"), std::string::npos);
  EXPECT_NE(error_of("[i for i in range(3) for j in range(2)]").find("nested"), std::string::npos);
  EXPECT_NE(error_of("[i for 1 in range(3)]").find("not a name"), std::string::npos);
  EXPECT_NE(error_of("[j for i in range(3)]").find("spec.json"), std::string::npos);  // unknown name
  EXPECT_NE(error_of("range(10**9)").find("more than"), std::string::npos);
  EXPECT_NE(error_of("[1, 2").find("[1, 2"), std::string::npos);
  EXPECT_NE(error_of("").find("expected a list"), std::string::npos);
}

}  // namespace
}  // namespace ktune
