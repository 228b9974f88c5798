// Tests of the expression language (tuner/core/expression.hpp): Python-compatible semantics,
// errors, binding, copies, the T1 `Conditions` of the shared Kernel Tuner specs, and the
// no-allocation hot path.
//
// Expected values in the table below were computed with Python 3's own eval() (math.ceil/floor
// for ceil/floor; ceil_div, round_up, log2, is_pow2 via their documented definitions).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/errors.hpp"
#include "tuner/core/expression.hpp"
#include "tuner/core/value.hpp"

// ---- allocation counter: replaces global operator new for this test executable ----------------
namespace {
std::atomic<long> g_allocations{0};
}  // namespace

// noinline: GCC otherwise pairs the inlined malloc/free across call sites and warns.
[[gnu::noinline]] void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace ktune {
namespace {

Value I(std::int64_t v) { return Value{v}; }
Value D(double v) { return Value{v}; }
Value S(const char* v) { return Value{std::string(v)}; }

using Vars = std::vector<std::pair<std::string, Value>>;

Value eval(const std::string& text, const Vars& vars = {}) {
  Expression e = Expression::parse(text, "test");
  std::vector<std::string> names;
  std::vector<Value> values;
  for (const auto& [name, value] : vars) {
    names.push_back(name);
    values.push_back(value);
  }
  e.bind(names);
  return e.evaluate(values);
}

std::string describe(const Value& v) {
  const char* type = v.index() == 0 ? "int " : v.index() == 1 ? "float " : "str ";
  return type + to_string(v);
}

::testing::AssertionResult same_value(const Value& got, const Value& want) {
  if (got.index() != want.index()) {
    return ::testing::AssertionFailure() << "got " << describe(got) << ", want " << describe(want);
  }
  if (const auto* d = std::get_if<double>(&want)) {
    const double g = std::get<double>(got);
    const double tolerance = 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::fabs(*d));
    if (std::fabs(g - *d) > tolerance || std::signbit(g) != std::signbit(*d))
      return ::testing::AssertionFailure() << "got " << describe(got) << ", want " << describe(want);
    return ::testing::AssertionSuccess();
  }
  if (got != want) return ::testing::AssertionFailure() << "got " << describe(got) << ", want " << describe(want);
  return ::testing::AssertionSuccess();
}

// The InputError message thrown by `f`, or a test failure if none is thrown.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-InputError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

std::string parse_error(const std::string& text) {
  return error_of([&] { Expression::parse(text, "spaces/x.json: constraints[2]"); });
}

std::string eval_error(const std::string& text, const Vars& vars = {}) {
  return error_of([&] { eval(text, vars); });
}

// ---- table of Python-verified results ---------------------------------------------------------

struct Case {
  const char* text;
  Vars vars;
  Value want;
};

const std::vector<Case>& python_cases() {
  static const std::vector<Case> cases = {
      {"12", {}, I(12LL)},
      {"0x1f", {}, I(31LL)},
      {"0X10", {}, I(16LL)},
      {"0o17", {}, I(15LL)},
      {"0b101", {}, I(5LL)},
      {"1.5", {}, D(1.5)},
      {"1e-3", {}, D(0.001)},
      {".5", {}, D(0.5)},
      {"1.", {}, D(1.0)},
      {"2E3", {}, D(2000.0)},
      {"True", {}, I(1)},
      {"False", {}, I(0)},
      {"'text'", {}, S("text")},
      {"\"text\"", {}, S("text")},
      {"'it\\'s'", {}, S("it's")},
      {"2 + 3 * 4", {}, I(14LL)},
      {"(2 + 3) * 4", {}, I(20LL)},
      {"10 - 4 - 3", {}, I(3LL)},
      {"2 * 3 ** 2", {}, I(18LL)},
      {"-2 ** 2", {}, I(-4LL)},
      {"(-2) ** 2", {}, I(4LL)},
      {"2 ** 3 ** 2", {}, I(512LL)},
      {"2 ** -1", {}, D(0.5)},
      {"-2 ** -2", {}, D(-0.25)},
      {"100 / 10 / 5", {}, D(2.0)},
      {"7 // 2 * 2", {}, I(6LL)},
      {"2 * 7 % 4", {}, I(2LL)},
      {"1 + 1 == 2", {}, I(1)},
      {"not 1 == 2", {}, I(1)},
      {"1 or 0 and 0", {}, I(1LL)},
      {"not 0 and 0", {}, I(0LL)},
      {"- - 3", {}, I(3LL)},
      {"+3 - -3", {}, I(6LL)},
      {"2 ** 2 ** -1", {}, D(1.4142135623730951)},
      {"1 + 2 if 0 else 5 * 2", {}, I(10LL)},
      {"1 if 0 else 2 if 0 else 3", {}, I(3LL)},
      {"1 if 1 else 2 if 0 else 3", {}, I(1LL)},
      {"(1 if 0 else 2) + 10", {}, I(12LL)},
      {"7 / 2", {}, D(3.5)},
      {"6 / 3", {}, D(2.0)},
      {"1 + 2.0", {}, D(3.0)},
      {"2 ** 10", {}, I(1024LL)},
      {"2.0 ** 2", {}, D(4.0)},
      {"3 * 1.5", {}, D(4.5)},
      {"2 ** 62", {}, I(4611686018427387904LL)},
      {"(-2) ** 63", {}, I(INT64_MIN)},
      {"10 - 2.5", {}, D(7.5)},
      {"4 ** 0.5", {}, D(2.0)},
      {"-7 // 2", {}, I(-4LL)},
      {"7 // -2", {}, I(-4LL)},
      {"-7 // -2", {}, I(3LL)},
      {"7 // 2", {}, I(3LL)},
      {"-7 % 2", {}, I(1LL)},
      {"7 % -2", {}, I(-1LL)},
      {"-7 % -2", {}, I(-1LL)},
      {"7 % 3", {}, I(1LL)},
      {"0 % -3", {}, I(0LL)},
      {"-6 % 3", {}, I(0LL)},
      {"-7.5 // 2", {}, D(-4.0)},
      {"7.5 // -2", {}, D(-4.0)},
      {"-7.5 % 2", {}, D(0.5)},
      {"5.0 % -2", {}, D(-1.0)},
      {"-0.5 % 1", {}, D(0.5)},
      {"7 // 2.0", {}, D(3.0)},
      {"-1 // 3", {}, I(-1LL)},
      {"-1 % 3", {}, I(2LL)},
      {"x // y", {{"x", I(-9LL)}, {"y", I(4LL)}}, I(-3LL)},
      {"x % y", {{"x", I(-9LL)}, {"y", I(4LL)}}, I(3LL)},
      {"1 <= x < 8", {{"x", I(0LL)}}, I(0)},
      {"1 <= x < 8", {{"x", I(1LL)}}, I(1)},
      {"1 <= x < 8", {{"x", I(7LL)}}, I(1)},
      {"1 <= x < 8", {{"x", I(8LL)}}, I(0)},
      {"1 < 2 > 0", {}, I(1)},
      {"3 > 2 > 1", {}, I(1)},
      {"1 < 3 < 2", {}, I(0)},
      {"1 == 1 == 1", {}, I(1)},
      {"1 == 1.0", {}, I(1)},
      {"2 != 2.5", {}, I(1)},
      {"1 < 2 < 3 < 4 < 5", {}, I(1)},
      {"1 < 2 < 3 < 2 < 5", {}, I(0)},
      {"32 <= x * y <= 1024", {{"x", I(4LL)}, {"y", I(8LL)}}, I(1)},
      {"32 <= x * y <= 1024", {{"x", I(2LL)}, {"y", I(8LL)}}, I(0)},
      {"32 <= x * y <= 1024", {{"x", I(32LL)}, {"y", I(64LL)}}, I(0)},
      {"(1 < 2) + (3 < 4)", {}, I(2LL)},
      {"1 < 2 == 1", {}, I(0)},
      {"0 or 5", {}, I(5LL)},
      {"3 and 0", {}, I(0LL)},
      {"3 and 4", {}, I(4LL)},
      {"0 and 4", {}, I(0LL)},
      {"'' or 'x'", {}, S("x")},
      {"0.0 or 2.5", {}, D(2.5)},
      {"x != 0 and 10 // x > 1", {{"x", I(0LL)}}, I(0)},
      {"x != 0 and 10 // x > 1", {{"x", I(3LL)}}, I(1)},
      {"x == 0 or 10 % x == 0", {{"x", I(0LL)}}, I(1)},
      {"x == 0 or 10 % x == 0", {{"x", I(3LL)}}, I(0)},
      {"1 if x == 0 else 10 // x", {{"x", I(0LL)}}, I(1LL)},
      {"1 if x == 0 else 10 // x", {{"x", I(5LL)}}, I(2LL)},
      {"0 > 1 > 1 // x", {{"x", I(0LL)}}, I(0)},
      {"not ''", {}, I(1)},
      {"not 'a'", {}, I(0)},
      {"not 0.0", {}, I(1)},
      {"not 2", {}, I(0)},
      {"x in [1, 2, 4]", {{"x", I(2LL)}}, I(1)},
      {"x in [1, 2, 4]", {{"x", I(3LL)}}, I(0)},
      {"x not in (3, 5)", {{"x", I(3LL)}}, I(0)},
      {"x not in (3, 5)", {{"x", I(4LL)}}, I(1)},
      {"x in []", {{"x", I(1LL)}}, I(0)},
      {"x in ()", {{"x", I(1LL)}}, I(0)},
      {"x in (3,)", {{"x", I(3LL)}}, I(1)},
      {"x in [1, 2,]", {{"x", I(2LL)}}, I(1)},
      {"2.0 in [1, 2]", {}, I(1)},
      {"'a' in ['a', 'b']", {}, I(1)},
      {"'c' in ['a', 'b']", {}, I(0)},
      {"1 in ['1']", {}, I(0)},
      {"x in (y, y + 1)", {{"x", I(5LL)}, {"y", I(4LL)}}, I(1)},
      {"'ell' in 'hello'", {}, I(1)},
      {"'xyz' not in 'hello'", {}, I(1)},
      {"s in ('a' + 'b')", {{"s", S("ab")}}, I(1)},
      {"'b' in (s)", {{"s", S("abc")}}, I(1)},
      {"x + 1 in [2, 3] and x > 0", {{"x", I(1LL)}}, I(1)},
      {"not x in [1, 2]", {{"x", I(1LL)}}, I(0)},
      {"s == 'abc'", {{"s", S("abc")}}, I(1)},
      {"s != 'abc'", {{"s", S("abc")}}, I(0)},
      {"s == 1", {{"s", S("abc")}}, I(0)},
      {"s != 1", {{"s", S("abc")}}, I(1)},
      {"s + 'def'", {{"s", S("abc")}}, S("abcdef")},
      {"'a' < 'b'", {}, I(1)},
      {"'b' <= 'a'", {}, I(0)},
      {"s + s == 'abcabc'", {{"s", S("abc")}}, I(1)},
      {"'x' if s else 'y'", {{"s", S("")}}, S("y")},
      {"s == \"abc\"", {{"s", S("abc")}}, I(1)},
      {"min(3, 1, 2)", {}, I(1LL)},
      {"max(3, 1, 2)", {}, I(3LL)},
      {"max(1, 2.5)", {}, D(2.5)},
      {"min(1, 1.0)", {}, I(1LL)},
      {"max(2.0, 2)", {}, D(2.0)},
      {"min('b', 'a')", {}, S("a")},
      {"abs(-3)", {}, I(3LL)},
      {"abs(-2.5)", {}, D(2.5)},
      {"abs(4)", {}, I(4LL)},
      {"int(3.9)", {}, I(3LL)},
      {"int(-3.9)", {}, I(-3LL)},
      {"int(7)", {}, I(7LL)},
      {"int(' 42 ')", {}, I(42LL)},
      {"int('-5')", {}, I(-5LL)},
      {"float(3)", {}, D(3.0)},
      {"float('2.5')", {}, D(2.5)},
      {"float(1.25)", {}, D(1.25)},
      {"ceil(2.1)", {}, I(3LL)},
      {"ceil(-2.1)", {}, I(-2LL)},
      {"floor(-2.1)", {}, I(-3LL)},
      {"floor(2.9)", {}, I(2LL)},
      {"floor(5)", {}, I(5LL)},
      {"ceil(4)", {}, I(4LL)},
      {"ceil(7 / 2)", {}, I(4LL)},
      {"ceil_div(7, 2)", {}, I(4LL)},
      {"ceil_div(8, 2)", {}, I(4LL)},
      {"ceil_div(-7, 2)", {}, I(-3LL)},
      {"ceil_div(7, -2)", {}, I(-3LL)},
      {"ceil_div(0, 5)", {}, I(0LL)},
      {"ceil_div(7.5, 2)", {}, I(4LL)},
      {"round_up(7, 4)", {}, I(8LL)},
      {"round_up(8, 4)", {}, I(8LL)},
      {"round_up(0, 4)", {}, I(0LL)},
      {"round_up(-5, 4)", {}, I(-4LL)},
      {"round_up(5, -4)", {}, I(8LL)},
      {"round_up(1.5, 0.5)", {}, D(1.5)},
      {"round_up(1.6, 0.5)", {}, D(2.0)},
      {"log2(8)", {}, D(3.0)},
      {"log2(10)", {}, D(3.321928094887362)},
      {"log2(0.25)", {}, D(-2.0)},
      {"is_pow2(64)", {}, I(1LL)},
      {"is_pow2(0)", {}, I(0LL)},
      {"is_pow2(6)", {}, I(0LL)},
      {"is_pow2(1)", {}, I(1LL)},
      {"is_pow2(-4)", {}, I(0LL)},
      {"is_pow2(8.0)", {}, I(1LL)},
      {"is_pow2(0.5)", {}, I(0LL)},
      {"is_pow2(2 ** 62)", {}, I(1LL)},
      {"min(x, y) * max(x, y)", {{"x", I(3LL)}, {"y", I(7LL)}}, I(21LL)},
      {"max(min(x, 4), 1)", {{"x", I(9LL)}}, I(4LL)},
      {"x - y", {{"x", D(2.5)}, {"y", I(1LL)}}, D(1.5)},
      {"x // y", {{"x", D(-7.5)}, {"y", I(2LL)}}, D(-4.0)},
      {"x % 3", {{"x", D(-7.5)}}, D(1.5)},
      {"x ** y", {{"x", I(2LL)}, {"y", D(0.5)}}, D(1.4142135623730951)},
      {"x < y", {{"x", I(1LL)}, {"y", D(1.5)}}, I(1)},
      {"x == y", {{"x", I(2LL)}, {"y", D(2.0)}}, I(1)},
      {"s + t", {{"s", S("ab")}, {"t", S("cd")}}, S("abcd")},
      {"x / 4", {{"x", I(10LL)}}, D(2.5)},
      {"x ** 2", {{"x", I(3LL)}}, I(9LL)},
      {"x ** 2", {{"x", D(1.5)}}, D(2.25)},
      {"x * y", {{"x", I(3LL)}, {"y", D(0.5)}}, D(1.5)},
      {"x % y", {{"x", I(7LL)}, {"y", I(-3LL)}}, I(-2LL)},
      {"x // y", {{"x", I(7LL)}, {"y", I(-3LL)}}, I(-3LL)},
      {"x // 3", {{"x", I(-7LL)}}, I(-3LL)},
      {"x % 3", {{"x", I(-7LL)}}, I(2LL)},
      {"x >= 2.5", {{"x", I(2LL)}}, I(0)},
      {"x != y", {{"x", S("a")}, {"y", S("a")}}, I(0)},
      {"x <= y", {{"x", S("a")}, {"y", S("b")}}, I(1)},
      {"x + 0.5", {{"x", I(1LL)}}, D(1.5)},
      {"-x ** 2", {{"x", I(3LL)}}, I(-9LL)},
      {"(-x) ** 2", {{"x", I(3LL)}}, I(9LL)},
      {"x ** -1", {{"x", I(4LL)}}, D(0.25)},
  };
  return cases;
}

TEST(Expression, MatchesPythonEval) {
  for (const Case& c : python_cases()) {
    SCOPED_TRACE(c.text);
    Value got;
    ASSERT_NO_THROW(got = eval(c.text, c.vars));
    EXPECT_TRUE(same_value(got, c.want));
  }
}

// The compiler folds variables and small int constants into binary instructions (five operand
// modes). Every mode must give the same value, or the same error, as the plain stack form.
TEST(Expression, OperandModesAgree) {
  const char* ops[] = {"+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=", ">", ">=", "in", "not in"};
  const std::vector<Value> values = {I(7), I(-3), I(0), I(2), D(2.5), D(-0.5), S("ab"), S("")};
  auto outcome = [](const std::string& text, const Value& a, const Value& b) -> std::string {
    try {
      Expression e = Expression::parse(text, "mode");
      e.bind({"a", "b"});
      const Value v = e.evaluate(std::vector<Value>{a, b});
      return describe(v);
    } catch (const InputError& error) {
      std::string msg = error.what();
      // Same message up to the quoted text.
      return "error: " + msg.substr(0, msg.find(" at column "));
    }
  };
  int compared = 0;
  for (const char* op : ops) {
    for (const Value& a : values) {
      for (const Value& b : values) {
        const std::string o = std::string(" ") + op + " ";
        const std::string ss = outcome("(a if 1 else 0)" + o + "(b if 1 else 0)", a, b);  // stack, stack
        EXPECT_EQ(outcome("(a if 1 else 0)" + o + "b", a, b), ss) << op;                  // stack, slot
        EXPECT_EQ(outcome("a" + o + "b", a, b), ss) << op;                                // slot, slot
        if (const auto* i = std::get_if<std::int64_t>(&b)) {
          const std::string lit = std::to_string(*i);
          EXPECT_EQ(outcome("a" + o + lit, a, b), ss) << op << " " << lit;                  // slot, imm
          EXPECT_EQ(outcome("(a if 1 else 0)" + o + lit, a, b), ss) << op << " " << lit;    // stack, imm
        }
        // The last link of a chain goes through the same modes: 1 < 2 OP b is 2 OP b.
        if (std::string(op).find_first_of("=<>in") != std::string::npos) {
          EXPECT_EQ(outcome("1 < 2" + o + "b", a, b), outcome("2" + o + "b", a, b)) << op;
          if (const auto* i = std::get_if<std::int64_t>(&b)) {
            EXPECT_EQ(outcome("1 < 2" + o + std::to_string(*i), a, b), outcome("2" + o + "b", a, b)) << op;
          }
        }
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 15 * 8 * 8);
  // A couple of spot checks so that agreement is not vacuous.
  EXPECT_EQ(outcome("a // b", I(7), I(-3)), "int -3");
  EXPECT_EQ(outcome("a - b", S("ab"), I(2)), "error: mode: unsupported operand types for -: 'str' and 'int'");
}

TEST(Expression, PrecedenceAndAssociativity) {
  EXPECT_TRUE(same_value(eval("2 + 3 * 4"), I(14)));
  EXPECT_TRUE(same_value(eval("10 - 4 - 3"), I(3)));          // left-assoc
  EXPECT_TRUE(same_value(eval("64 // 4 // 2"), I(8)));        // left-assoc
  EXPECT_TRUE(same_value(eval("2 ** 3 ** 2"), I(512)));       // right-assoc
  EXPECT_TRUE(same_value(eval("-2 ** 2"), I(-4)));            // ** binds tighter than unary -
  EXPECT_TRUE(same_value(eval("2 ** -1"), D(0.5)));           // unary - allowed in exponent
  EXPECT_TRUE(same_value(eval("not 1 == 2"), I(1)));          // not (1 == 2)
  EXPECT_TRUE(same_value(eval("1 or 0 and 0"), I(1)));        // and binds tighter than or
  EXPECT_TRUE(same_value(eval("(1 or 0) and 0"), I(0)));
  EXPECT_TRUE(same_value(eval("1 + 2 if 0 else 3"), I(3)));   // ternary is lowest
  EXPECT_TRUE(same_value(eval("1 + 1 < 3 == 1"), I(0)));      // chain: (2 < 3) and (3 == 1)
  EXPECT_TRUE(same_value(eval("(1 + 1 < 3) == 1"), I(1)));
}

TEST(Expression, CStyleLogic) {
  EXPECT_TRUE(same_value(eval("x > 0 && y > 0", {{"x", I(1)}, {"y", I(0)}}), I(0)));
  EXPECT_TRUE(same_value(eval("x > 0 || y > 0", {{"x", I(1)}, {"y", I(0)}}), I(1)));
  EXPECT_TRUE(same_value(eval("!x", {{"x", I(0)}}), I(1)));
  EXPECT_TRUE(same_value(eval("!(x == 3)", {{"x", I(3)}}), I(0)));
  EXPECT_TRUE(same_value(eval("!x == 0", {{"x", I(5)}}), I(1)));  // (!x) == 0, as in C
  EXPECT_TRUE(same_value(eval("x != 0 && 10 / x > 1", {{"x", I(0)}}), I(0)));
  EXPECT_TRUE(same_value(eval("x == 0 || 10 / x > 1", {{"x", I(0)}}), I(1)));
}

TEST(Expression, FloorDivisionAndModuloFollowPython) {
  EXPECT_TRUE(same_value(eval("-7 // 2"), I(-4)));
  EXPECT_TRUE(same_value(eval("-7 % 2"), I(1)));
  EXPECT_TRUE(same_value(eval("7 % -2"), I(-1)));
  EXPECT_TRUE(same_value(eval("-7.5 // 2"), D(-4.0)));
  EXPECT_TRUE(same_value(eval("-7.5 % 2"), D(0.5)));
  EXPECT_TRUE(same_value(eval("x % -1", {{"x", I(INT64_MIN)}}), I(0)));
  // a == (a // b) * b + a % b for every sign combination
  for (std::int64_t a : {-9, -8, -1, 0, 1, 7, 8, 9}) {
    for (std::int64_t b : {-4, -3, -1, 1, 3, 4}) {
      const Vars vars = {{"a", I(a)}, {"b", I(b)}};
      EXPECT_TRUE(same_value(eval("(a // b) * b + a % b == a", vars), I(1))) << a << " " << b;
      EXPECT_TRUE(same_value(eval("0 <= a % b < b if b > 0 else b < a % b <= 0", vars), I(1))) << a << " " << b;
    }
  }
}

TEST(Expression, Power) {
  EXPECT_TRUE(same_value(eval("2 ** 10"), I(1024)));
  EXPECT_TRUE(same_value(eval("3 ** 0"), I(1)));
  EXPECT_TRUE(same_value(eval("(-3) ** 3"), I(-27)));
  EXPECT_TRUE(same_value(eval("2 ** 62"), I(std::int64_t{1} << 62)));
  EXPECT_TRUE(same_value(eval("(-2) ** 63"), I(INT64_MIN)));
  EXPECT_TRUE(same_value(eval("4 ** 0.5"), D(2.0)));
  EXPECT_TRUE(same_value(eval("2.0 ** 3"), D(8.0)));
  EXPECT_TRUE(same_value(eval("1 ** 1000000"), I(1)));
  EXPECT_TRUE(same_value(eval("(-1) ** 1000001"), I(-1)));
  EXPECT_TRUE(same_value(eval("0 ** 0"), I(1)));
}

TEST(Expression, ChainedComparisons) {
  for (std::int64_t x = -1; x <= 9; ++x) {
    const bool want = 1 <= x && x < 8;
    EXPECT_TRUE(same_value(eval("1 <= x < 8", {{"x", I(x)}}), I(want ? 1 : 0))) << x;
  }
  EXPECT_TRUE(same_value(eval("1 < 3 < 2"), I(0)));
  EXPECT_TRUE(same_value(eval("3 > 2 > 1"), I(1)));
  EXPECT_TRUE(same_value(eval("1 < 2 < 3 < 2 < 5"), I(0)));
  // The chain stops at the first false link: 1 // x is never evaluated.
  EXPECT_TRUE(same_value(eval("0 > 1 > 1 // x", {{"x", I(0)}}), I(0)));
  EXPECT_NE(eval_error("1 > 0 > 1 // x", {{"x", I(0)}}), "");
  // Chains mixing strings.
  EXPECT_TRUE(same_value(eval("'a' < s <= 'c'", {{"s", S("b")}}), I(1)));
}

TEST(Expression, ShortCircuit) {
  EXPECT_TRUE(same_value(eval("x != 0 and 10 // x > 1", {{"x", I(0)}}), I(0)));
  EXPECT_TRUE(same_value(eval("x != 0 and 10 // x > 1", {{"x", I(2)}}), I(1)));
  EXPECT_TRUE(same_value(eval("x == 0 or 10 % x == 0", {{"x", I(0)}}), I(1)));
  EXPECT_TRUE(same_value(eval("x and y / x", {{"x", I(0)}, {"y", I(1)}}), I(0)));
  EXPECT_TRUE(same_value(eval("x == 0 or y == 0 or 1 / (x * y) > 0", {{"x", I(1)}, {"y", I(0)}}), I(1)));
  // and/or yield an operand, as in Python.
  EXPECT_TRUE(same_value(eval("0 or 5"), I(5)));
  EXPECT_TRUE(same_value(eval("3 and 2.5"), D(2.5)));
  EXPECT_TRUE(same_value(eval("'' or 'x'"), S("x")));
  // But the right-hand side is evaluated when needed.
  EXPECT_NE(eval_error("x == 0 and 10 // x > 1", {{"x", I(0)}}), "");
}

TEST(Expression, Ternary) {
  EXPECT_TRUE(same_value(eval("1 if x == 0 else 10 // x", {{"x", I(0)}}), I(1)));
  EXPECT_TRUE(same_value(eval("1 if x == 0 else 10 // x", {{"x", I(5)}}), I(2)));
  EXPECT_TRUE(same_value(eval("10 // x if x else -1", {{"x", I(0)}}), I(-1)));
  EXPECT_TRUE(same_value(eval("'a' if x > 1 else 'b' if x > 0 else 'c'", {{"x", I(2)}}), S("a")));
  EXPECT_TRUE(same_value(eval("'a' if x > 1 else 'b' if x > 0 else 'c'", {{"x", I(1)}}), S("b")));
  EXPECT_TRUE(same_value(eval("'a' if x > 1 else 'b' if x > 0 else 'c'", {{"x", I(0)}}), S("c")));
  EXPECT_TRUE(same_value(eval("(2 if x else 3) * 10", {{"x", I(1)}}), I(20)));
  EXPECT_TRUE(same_value(eval("x if x > y else y", {{"x", D(1.5)}, {"y", I(1)}}), D(1.5)));
}

TEST(Expression, Membership) {
  for (std::int64_t x = 0; x <= 6; ++x) {
    const bool in_list = x == 1 || x == 2 || x == 4;
    EXPECT_TRUE(same_value(eval("x in [1, 2, 4]", {{"x", I(x)}}), I(in_list ? 1 : 0))) << x;
    const bool not_in = !(x == 3 || x == 5);
    EXPECT_TRUE(same_value(eval("x not in (3, 5)", {{"x", I(x)}}), I(not_in ? 1 : 0))) << x;
  }
  EXPECT_TRUE(same_value(eval("x in (3,)", {{"x", I(3)}}), I(1)));
  EXPECT_TRUE(same_value(eval("x in []", {{"x", I(3)}}), I(0)));
  EXPECT_TRUE(same_value(eval("x not in []", {{"x", I(3)}}), I(1)));
  EXPECT_TRUE(same_value(eval("x in [y, y * 2, y * 4]", {{"x", I(8)}, {"y", I(2)}}), I(1)));
  EXPECT_TRUE(same_value(eval("x in (y)", {{"x", S("b")}, {"y", S("abc")}}), I(1)));  // parenthesized string
  EXPECT_TRUE(same_value(eval("x in (y) + 'd'", {{"x", S("cd")}, {"y", S("abc")}}), I(1)));
  EXPECT_TRUE(same_value(eval("2.0 in [1, 2]"), I(1)));
  EXPECT_TRUE(same_value(eval("s in ['float', 'half']", {{"s", S("half")}}), I(1)));
  EXPECT_TRUE(same_value(eval("s in ['float', 'half']", {{"s", S("double")}}), I(0)));
  EXPECT_TRUE(same_value(eval("1 in ['1']"), I(0)));
  EXPECT_TRUE(same_value(eval("x in [1, 2] and x in (2, 3)", {{"x", I(2)}}), I(1)));
  EXPECT_TRUE(same_value(eval("not x in [1, 2]", {{"x", I(2)}}), I(0)));
  EXPECT_TRUE(same_value(eval("1 < x in [2, 3]", {{"x", I(2)}}), I(1)));  // 1 < x and x in [...]
  EXPECT_TRUE(same_value(eval("1 < x in [2, 3]", {{"x", I(0)}}), I(0)));
  EXPECT_NE(eval_error("x in (3)", {{"x", I(3)}}).find("not iterable"), std::string::npos);
}

TEST(Expression, Strings) {
  const Vars vars = {{"s", S("abc")}, {"empty", S("")}};
  EXPECT_TRUE(same_value(eval("s == 'abc'", vars), I(1)));
  EXPECT_TRUE(same_value(eval("s == \"abc\"", vars), I(1)));
  EXPECT_TRUE(same_value(eval("s != 'abd'", vars), I(1)));
  EXPECT_TRUE(same_value(eval("s == 1", vars), I(0)));
  EXPECT_TRUE(same_value(eval("s != 1", vars), I(1)));
  EXPECT_TRUE(same_value(eval("s + 'def'", vars), S("abcdef")));
  EXPECT_TRUE(same_value(eval("s + s + s == 'abcabcabc'", vars), I(1)));
  EXPECT_TRUE(same_value(eval("s", vars), S("abc")));
  EXPECT_TRUE(same_value(eval("'it\\'s' + \"\\\"q\\\"\""), S("it's\"q\"")));
  EXPECT_TRUE(same_value(eval("'a\\tb'"), S("a\tb")));
  EXPECT_TRUE(same_value(eval("empty or s", vars), S("abc")));
  EXPECT_TRUE(same_value(eval("not empty", vars), I(1)));
  EXPECT_TRUE(same_value(eval("'ab' in s", vars), I(1)));
  EXPECT_TRUE(same_value(eval("'b' < s", vars), I(0)));
  EXPECT_TRUE(same_value(eval("min(s, 'abb')", vars), S("abb")));
  Expression e = Expression::parse("s == 'abc'");
  e.bind({"s"});
  std::vector<Value> slots = {S("abc")};
  EXPECT_TRUE(e.evaluate_bool(slots));
  slots[0] = S("abd");
  EXPECT_FALSE(e.evaluate_bool(slots));
  EXPECT_FALSE(Expression::parse("''").evaluate_bool({}));
  EXPECT_TRUE(Expression::parse("'x'").evaluate_bool({}));
}

TEST(Expression, Functions) {
  EXPECT_TRUE(same_value(eval("min(3, 1, 2)"), I(1)));
  EXPECT_TRUE(same_value(eval("max(3, 1, 2)"), I(3)));
  EXPECT_TRUE(same_value(eval("max(1, 2.5)"), D(2.5)));
  EXPECT_TRUE(same_value(eval("min(1, 1.0)"), I(1)));  // first of equals, type kept
  EXPECT_TRUE(same_value(eval("max(2.0, 2)"), D(2.0)));
  EXPECT_TRUE(same_value(eval("abs(-3)"), I(3)));
  EXPECT_TRUE(same_value(eval("abs(-2.5)"), D(2.5)));
  EXPECT_TRUE(same_value(eval("int(3.9)"), I(3)));
  EXPECT_TRUE(same_value(eval("int(-3.9)"), I(-3)));  // toward zero
  EXPECT_TRUE(same_value(eval("int(' 42 ')"), I(42)));
  EXPECT_TRUE(same_value(eval("int(True)"), I(1)));
  EXPECT_TRUE(same_value(eval("float(3)"), D(3.0)));
  EXPECT_TRUE(same_value(eval("float('2.5')"), D(2.5)));
  EXPECT_TRUE(same_value(eval("ceil(2.1)"), I(3)));
  EXPECT_TRUE(same_value(eval("ceil(-2.1)"), I(-2)));
  EXPECT_TRUE(same_value(eval("floor(-2.1)"), I(-3)));
  EXPECT_TRUE(same_value(eval("floor(2.9)"), I(2)));
  EXPECT_TRUE(same_value(eval("ceil(5)"), I(5)));
  EXPECT_TRUE(same_value(eval("ceil_div(7, 2)"), I(4)));
  EXPECT_TRUE(same_value(eval("ceil_div(8, 2)"), I(4)));
  EXPECT_TRUE(same_value(eval("ceil_div(-7, 2)"), I(-3)));
  EXPECT_TRUE(same_value(eval("ceil_div(n, b) * b >= n", {{"n", I(1000)}, {"b", I(64)}}), I(1)));
  EXPECT_TRUE(same_value(eval("round_up(7, 4)"), I(8)));
  EXPECT_TRUE(same_value(eval("round_up(8, 4)"), I(8)));
  EXPECT_TRUE(same_value(eval("round_up(0, 4)"), I(0)));
  EXPECT_TRUE(same_value(eval("round_up(-5, 4)"), I(-4)));
  EXPECT_TRUE(same_value(eval("round_up(1.6, 0.5)"), D(2.0)));
  EXPECT_TRUE(same_value(eval("log2(8)"), D(3.0)));
  EXPECT_TRUE(same_value(eval("log2(1024.0)"), D(10.0)));
  EXPECT_TRUE(same_value(eval("is_pow2(64)"), I(1)));
  EXPECT_TRUE(same_value(eval("is_pow2(1)"), I(1)));
  EXPECT_TRUE(same_value(eval("is_pow2(0)"), I(0)));
  EXPECT_TRUE(same_value(eval("is_pow2(96)"), I(0)));
  EXPECT_TRUE(same_value(eval("is_pow2(-8)"), I(0)));
  EXPECT_TRUE(same_value(eval("is_pow2(8.0)"), I(1)));
  // A variable may share a function's name when it is not called.
  EXPECT_TRUE(same_value(eval("min + 1", {{"min", I(4)}}), I(5)));
  EXPECT_TRUE(same_value(eval("min(min, 2)", {{"min", I(4)}}), I(2)));
}

TEST(Expression, FunctionErrors) {
  EXPECT_NE(eval_error("log2(0)").find("log2"), std::string::npos);
  EXPECT_NE(eval_error("log2(-1.0)").find("math domain error"), std::string::npos);
  EXPECT_NE(eval_error("ceil_div(1, 0)").find("by zero"), std::string::npos);
  EXPECT_NE(eval_error("round_up(1, 0)").find("by zero"), std::string::npos);
  EXPECT_NE(eval_error("abs('x')").find("abs() expects a number"), std::string::npos);
  EXPECT_NE(eval_error("int('4.5')").find("invalid literal for int()"), std::string::npos);
  EXPECT_NE(eval_error("float('abc')").find("could not convert"), std::string::npos);
  EXPECT_NE(eval_error("ceil(1e300)").find("out of integer range"), std::string::npos);
  EXPECT_NE(eval_error("min(1, 'a')").find("not supported"), std::string::npos);
  EXPECT_NE(eval_error("is_pow2('8')").find("is_pow2"), std::string::npos);
}

TEST(Expression, DeepStacksAndLongLists) {
  // More than the interpreter's inline stack (64 cells): a 200-item list and a 100-argument max.
  std::string list = "x in [";
  std::string args = "max(";
  for (int k = 0; k < 200; ++k) list += std::to_string(k * 3) + (k + 1 < 200 ? ", " : "]");
  for (int k = 0; k < 100; ++k) args += std::to_string((k * 37) % 101) + (k + 1 < 100 ? ", " : ")");
  EXPECT_TRUE(same_value(eval(list, {{"x", I(597)}}), I(1)));
  EXPECT_TRUE(same_value(eval(list, {{"x", I(598)}}), I(0)));
  EXPECT_TRUE(same_value(eval(args), I(100)));
  // Right-nested arithmetic keeps every operand on the stack.
  std::string nested = "1";
  for (int k = 0; k < 80; ++k) nested = "x + (" + nested + ")";
  EXPECT_TRUE(same_value(eval(nested, {{"x", I(2)}}), I(161)));
}

TEST(Expression, LiteralsAndTypes) {
  EXPECT_TRUE(same_value(eval("0x1f"), I(31)));
  EXPECT_TRUE(same_value(eval("0xFF + 0b11 + 0o10"), I(255 + 3 + 8)));
  EXPECT_TRUE(same_value(eval("1e-3"), D(1e-3)));
  EXPECT_TRUE(same_value(eval(".5"), D(0.5)));
  EXPECT_TRUE(same_value(eval("1.5e2"), D(150.0)));
  EXPECT_TRUE(same_value(eval("True + True"), I(2)));
  EXPECT_TRUE(same_value(eval("False"), I(0)));
  EXPECT_TRUE(same_value(eval("9223372036854775807"), I(INT64_MAX)));
  EXPECT_TRUE(same_value(eval("7 / 7"), D(1.0)));  // true division is always float
  EXPECT_TRUE(same_value(eval("1 + 2.0"), D(3.0)));
  EXPECT_TRUE(same_value(eval("3 < 2.5"), I(0)));
  EXPECT_TRUE(same_value(eval("x * 2", {{"x", D(0.25)}}), D(0.5)));
}

TEST(Expression, VariablesInFirstUseOrder) {
  Expression e = Expression::parse("b + a * b + min(c, a) if d else max(e, b)");
  EXPECT_EQ(e.variables(), (std::vector<std::string>{"b", "a", "c", "d", "e"}));
  EXPECT_TRUE(Expression::parse("1 + 2 * ceil(3.5)").variables().empty());
  EXPECT_EQ(Expression::parse("x in (y, z)").variables(), (std::vector<std::string>{"x", "y", "z"}));
  // Backtracking over `(expr)` after `in` does not disturb the order.
  EXPECT_EQ(Expression::parse("x in (y) + z").variables(), (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(Expression::parse("block_x * block_y <= max_threads and tile % 4 == 0").variables(),
            (std::vector<std::string>{"block_x", "block_y", "max_threads", "tile"}));
  EXPECT_EQ(Expression::parse("  a+b ").text(), "  a+b ");
}

TEST(Expression, BindResolvesSlotsInAnyOrder) {
  Expression e = Expression::parse("block_x * block_y <= max_threads and tile % 4 == 0");
  e.bind({"block_x", "block_y", "tile", "max_threads"});
  EXPECT_TRUE(e.evaluate_bool(std::vector<Value>{I(16), I(16), I(8), I(256)}));
  EXPECT_FALSE(e.evaluate_bool(std::vector<Value>{I(16), I(32), I(8), I(256)}));
  EXPECT_FALSE(e.evaluate_bool(std::vector<Value>{I(16), I(16), I(6), I(256)}));
  // Rebinding to another layout with extra, unused slots.
  e.bind({"unused", "max_threads", "tile", "other", "block_y", "block_x"});
  EXPECT_TRUE(e.evaluate_bool(std::vector<Value>{S("x"), I(256), I(8), D(1.5), I(16), I(16)}));
  EXPECT_FALSE(e.evaluate_bool(std::vector<Value>{S("x"), I(128), I(8), D(1.5), I(16), I(16)}));
}

TEST(Expression, BindErrors) {
  Expression e = Expression::parse("a + missing * b", "spaces/s.json: constraints[0]");
  const std::string msg = error_of([&] { e.bind({"a", "b", "c"}); });
  EXPECT_NE(msg.find("spaces/s.json: constraints[0]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown variable 'missing'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a, b, c"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"a + missing * b\""), std::string::npos) << msg;
  const std::string two = error_of([&] { Expression::parse("p + q").bind({}); });
  EXPECT_NE(two.find("'p', 'q'"), std::string::npos) << two;
  EXPECT_NE(two.find("(none)"), std::string::npos) << two;
  // A failed bind leaves the expression unbound; evaluating it is an error, not a crash.
  EXPECT_NE(error_of([&] { e.evaluate(std::vector<Value>{I(1), I(2), I(3)}); }).find("before bind()"),
            std::string::npos);
  // Too few slot values.
  e.bind({"a", "b", "c", "missing"});
  EXPECT_NE(error_of([&] { e.evaluate(std::vector<Value>{I(1)}); }).find("needs 4 slot values"), std::string::npos);
  EXPECT_TRUE(same_value(e.evaluate(std::vector<Value>{I(1), I(2), I(3), I(4)}), I(9)));
  // An expression without variables needs no bind().
  EXPECT_TRUE(same_value(Expression::parse("6 * 7").evaluate({}), I(42)));
}

TEST(Expression, ParseErrorsNameColumnAndExpectation) {
  {
    const std::string msg = parse_error("a * (b + c");
    EXPECT_EQ(msg, "spaces/x.json: constraints[2]: expected ')' at column 11 in \"a * (b + c\"");
  }
  struct ErrorCase {
    const char* text;
    const char* expected;  // substring of the message
    int column;
  };
  const ErrorCase cases[] = {
      {"", "expected an expression", 1},
      {"1 +", "expected an expression", 4},
      {"a b", "expected an operator or end of expression", 3},
      {"(a + b))", "expected an operator or end of expression", 8},
      {"min(1 2)", "expected ',' or ')'", 7},
      {"min(1)", "expected at least 2 arguments to min(), got 1", 1},
      {"x + ceil_div(1, 2, 3)", "expected 2 arguments to ceil_div(), got 3", 5},
      {"abs()", "expected 1 argument to abs(), got 0", 1},
      {"1 + foo(2)", "expected a known function", 5},
      {"'abc", "expected closing '", 5},
      {"1 if x", "expected 'else'", 7},
      {"a & b", "expected '&&'", 3},
      {"a | b", "expected '||'", 3},
      {"a = b", "expected '=='", 3},
      {"a @ b", "found '@'", 3},
      {"[1, 2]", "a list is only allowed after 'in'", 1},
      {"x in [1, 2] == 1", "no further comparison after a list", 13},
      {"x in [1 2]", "expected ',' or ']'", 9},
      {"x == not y", "expected an expression, found 'not'", 6},
      {"1 2", "expected an operator or end of expression", 3},
      {"012", "without leading zeros", 1},
      {"99999999999999999999", "fits in 64 bits", 1},
      {"0x", "base-16 digits", 1},
      {"1e+", "exponent digits", 4},
      {"2x", "an operator after the number", 2},
      {"a if b", "expected 'else'", 7},
      {"not", "expected an expression", 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string msg = parse_error(c.text);
    EXPECT_NE(msg.find("spaces/x.json: constraints[2]: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
    EXPECT_NE(msg.find(" at column " + std::to_string(c.column) + " in \"" + c.text + "\""), std::string::npos)
        << msg;
  }
  // Deep nesting is refused, not a stack overflow.
  EXPECT_NE(parse_error(std::string(5000, '(') + "1" + std::string(5000, ')')).find("less deeply nested"),
            std::string::npos);
  EXPECT_NE(parse_error(std::string(5000, '-') + "1").find("less deeply nested"), std::string::npos);
  // But reasonable nesting is fine.
  EXPECT_TRUE(same_value(eval(std::string(50, '(') + "1" + std::string(50, ')')), I(1)));
}

TEST(Expression, RuntimeErrorsNameTheExpression) {
  const Vars zero = {{"x", I(0)}, {"s", S("str")}};
  struct ErrorCase {
    const char* text;
    const char* expected;
  };
  const ErrorCase cases[] = {
      {"10 / x", "division by zero at column 4"},
      {"10 // x", "integer division by zero at column 4"},
      {"10 % x", "integer modulo by zero at column 4"},
      {"1.5 / x", "float division by zero"},
      {"1.5 // x", "float floor division by zero"},
      {"1.5 % x", "float modulo by zero"},
      {"s - 1", "unsupported operand types for -: 'str' and 'int'"},
      {"s * 2", "unsupported operand types for *: 'str' and 'int'"},
      {"1 + s", "unsupported operand types for +: 'int' and 'str'"},
      {"-s", "bad operand type for unary -: 'str'"},
      {"s < 1", "'<' not supported between 'str' and 'int'"},
      {"2 ** 63", "integer overflow in **"},
      {"9223372036854775807 + 1", "integer overflow in +"},
      {"x ** -1", "zero to a negative power"},
      {"(-8) ** 0.5", "fractional power"},
      {"1 in x", "argument of type 'int' is not iterable"},
      {"x in s", "requires a string as left operand"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string msg = error_of([&] {
      Expression e = Expression::parse(c.text, "spaces/y.json: constraints[1]");
      e.bind({"x", "s"});
      e.evaluate(std::vector<Value>{I(0), S("str")});
    });
    EXPECT_NE(msg.find("spaces/y.json: constraints[1]: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("in \"") + c.text + "\""), std::string::npos) << msg;
  }
  // Errors are also raised through evaluate_bool.
  Expression e = Expression::parse("10 // x > 1");
  e.bind({"x"});
  EXPECT_THROW(e.evaluate_bool(std::vector<Value>{I(0)}), InputError);
  EXPECT_TRUE(e.evaluate_bool(std::vector<Value>{I(3)}));
}

TEST(Expression, CopyAndMove) {
  Expression original = Expression::parse("a - b", "orig");
  original.bind({"a", "b"});
  Expression copy = original;
  copy.bind({"b", "a"});  // rebinding the copy must not affect the original
  const std::vector<Value> slots = {I(10), I(3)};
  EXPECT_TRUE(same_value(original.evaluate(slots), I(7)));
  EXPECT_TRUE(same_value(copy.evaluate(slots), I(-7)));

  Expression assigned = Expression::parse("0");
  assigned = original;
  EXPECT_TRUE(same_value(assigned.evaluate(slots), I(7)));
  EXPECT_EQ(assigned.text(), "a - b");
  assigned = *&assigned;  // self-assignment
  EXPECT_TRUE(same_value(assigned.evaluate(slots), I(7)));

  Expression moved = std::move(copy);
  EXPECT_TRUE(same_value(moved.evaluate(slots), I(-7)));
  EXPECT_EQ(moved.variables(), (std::vector<std::string>{"a", "b"}));
  Expression move_assigned = Expression::parse("1");
  move_assigned = std::move(moved);
  EXPECT_TRUE(same_value(move_assigned.evaluate(slots), I(-7)));

  // Copies of string-constant expressions point at their own constants.
  Expression* heap = new Expression(Expression::parse("s == 'abc' and s + 'd' == 'abcd'"));
  heap->bind({"s"});
  Expression string_copy = *heap;
  delete heap;
  EXPECT_TRUE(string_copy.evaluate_bool(std::vector<Value>{S("abc")}));
  std::vector<Expression> many;
  for (int k = 0; k < 20; ++k) many.push_back(string_copy);  // reallocation moves them
  for (const auto& x : many) EXPECT_TRUE(x.evaluate_bool(std::vector<Value>{S("abc")}));
}

// ---- T1 conditions of the shared Kernel Tuner specs -------------------------------------------

// The T1 specs of ../shared/data sit beside a developer's checkout, not inside the repository.
bool shared_data_present(const std::string& name) {
  return std::ifstream(std::string(KTUNE_SHARED_DATA_DIR) + "/kernel_tuner_caches/" + name).good();
}

nlohmann::json read_json(const std::string& name) {
  const std::string path = std::string(KTUNE_SHARED_DATA_DIR) + "/kernel_tuner_caches/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

struct T1Space {
  std::vector<std::string> names;                 // TuningParameters order
  std::vector<std::vector<Value>> values;         // each parameter's values
  std::vector<Expression> conditions;             // bound to `names`
  std::vector<std::vector<std::string>> declared; // each condition's `Parameters`
};

T1Space load_t1(const std::string& file) {
  const nlohmann::json spec = read_json(file);
  const auto& space = spec.at("ConfigurationSpace");
  T1Space out;
  for (const auto& p : space.at("TuningParameters")) {
    out.names.push_back(p.at("Name").get<std::string>());
    std::vector<Value> values;
    for (const auto& v : nlohmann::json::parse(p.at("Values").get<std::string>()))
      values.push_back(value_from_json(v, file));
    out.values.push_back(std::move(values));
  }
  int index = 0;
  for (const auto& c : space.at("Conditions")) {
    out.conditions.push_back(Expression::parse(c.at("Expression").get<std::string>(),
                                               file + ": Conditions[" + std::to_string(index++) + "]"));
    out.declared.push_back(c.at("Parameters").get<std::vector<std::string>>());
  }
  for (auto& e : out.conditions) e.bind(out.names);
  return out;
}

std::vector<Value> ints(std::initializer_list<std::int64_t> values) {
  std::vector<Value> out;
  for (auto v : values) out.emplace_back(std::in_place_type<std::int64_t>, v);
  return out;
}

// Brute force over the Cartesian product; counts configurations passing each condition and all.
std::pair<std::vector<long>, long> count_valid(const T1Space& space) {
  std::vector<long> per(space.conditions.size(), 0);
  long all = 0;
  std::vector<std::size_t> index(space.names.size(), 0);
  std::vector<Value> slots(space.names.size());
  while (true) {
    for (std::size_t k = 0; k < index.size(); ++k) slots[k] = space.values[k][index[k]];
    bool ok = true;
    for (std::size_t c = 0; c < space.conditions.size(); ++c) {
      const bool r = space.conditions[c].evaluate_bool(slots);
      per[c] += r;
      ok = ok && r;
    }
    all += ok;
    std::size_t k = 0;
    while (k < index.size() && ++index[k] == space.values[k].size()) index[k++] = 0;
    if (k == index.size()) break;
  }
  return {per, all};
}

TEST(ExpressionT1, ConvolutionConditions) {
  if (!shared_data_present("convolution_milo_T1.json")) GTEST_SKIP() << "the shared T1 data is not beside this checkout";
  const T1Space space = load_t1("convolution_milo_T1.json");
  ASSERT_EQ(space.conditions.size(), 4u);
  // Each condition binds to its declared Parameters, except the 4th: the spec's list omits
  // filter_width and filter_height, which the expression reads (they are tuning parameters).
  for (std::size_t c = 0; c < 3; ++c) {
    Expression e = space.conditions[c];
    EXPECT_NO_THROW(e.bind(space.declared[c])) << c;
  }
  {
    Expression e = space.conditions[3];
    const std::string msg = error_of([&] { e.bind(space.declared[3]); });
    EXPECT_NE(msg.find("'filter_width', 'filter_height'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Conditions[3]"), std::string::npos) << msg;
  }
  EXPECT_EQ(space.conditions[3].variables(),
            (std::vector<std::string>{"use_shmem", "block_size_x", "tile_size_x", "filter_width", "block_size_y",
                                      "tile_size_y", "filter_height"}));
  // names: block_size_x block_size_y tile_size_x tile_size_y read_only use_padding use_shmem use_cmem
  //        filter_height filter_width; truth values from Python's eval of each Expression.
  const struct {
    std::vector<Value> config;
    std::vector<int> want;
  } picks[] = {
      {ints({16, 16, 1, 1, 0, 1, 1, 1, 15, 15}), {1, 1, 1, 1}},
      {ints({32, 8, 2, 2, 1, 1, 1, 1, 15, 15}), {0, 1, 1, 1}},
      {ints({256, 8, 4, 4, 0, 0, 0, 1, 15, 15}), {1, 0, 1, 1}},
      {ints({48, 4, 3, 2, 0, 1, 0, 1, 15, 15}), {1, 1, 0, 1}},
      {ints({128, 4, 4, 4, 1, 0, 1, 1, 15, 15}), {1, 1, 1, 0}},
  };
  for (const auto& pick : picks) {
    for (std::size_t c = 0; c < space.conditions.size(); ++c) {
      EXPECT_EQ(space.conditions[c].evaluate_bool(pick.config), pick.want[c] != 0)
          << space.conditions[c].text() << " on " << to_string(pick.config[0]) << "x" << to_string(pick.config[1]);
    }
  }
  // Whole space (10240 configurations), counts from Python.
  const auto [per, all] = count_valid(space);
  EXPECT_EQ(per, (std::vector<long>{7680, 7680, 7680, 8752}));
  EXPECT_EQ(all, 4362);
}

TEST(ExpressionT1, DedispersionConditions) {
  if (!shared_data_present("dedispersion_milo_T1.json")) GTEST_SKIP() << "the shared T1 data is not beside this checkout";
  const T1Space space = load_t1("dedispersion_milo_T1.json");
  ASSERT_EQ(space.conditions.size(), 3u);
  for (std::size_t c = 0; c < space.conditions.size(); ++c) {
    Expression e = space.conditions[c];
    EXPECT_NO_THROW(e.bind(space.declared[c])) << c;
    EXPECT_EQ(e.variables(), space.declared[c]) << c;
  }
  // names: block_size_x block_size_y block_size_z tile_size_x tile_size_y tile_stride_x
  //        tile_stride_y loop_unroll_factor_channel
  const struct {
    std::vector<Value> config;
    std::vector<int> want;
  } picks[] = {
      {ints({1, 32, 1, 1, 1, 0, 0, 0}), {1, 1, 1}},
      {ints({16, 64, 1, 1, 2, 1, 1, 0}), {1, 0, 1}},
      {ints({4, 256, 1, 3, 1, 1, 0, 0}), {1, 1, 1}},
      {ints({32, 40, 1, 4, 8, 0, 1, 0}), {0, 1, 1}},
      {ints({8, 128, 1, 2, 1, 1, 1, 0}), {1, 1, 0}},
  };
  for (const auto& pick : picks) {
    for (std::size_t c = 0; c < space.conditions.size(); ++c) {
      EXPECT_EQ(space.conditions[c].evaluate_bool(pick.config), pick.want[c] != 0) << space.conditions[c].text();
    }
  }
  // Whole space (22272 configurations), counts from Python.
  const auto [per, all] = count_valid(space);
  EXPECT_EQ(per, (std::vector<long>{13568, 19488, 20880}));
  EXPECT_EQ(all, 11130);
}

// ---- hot path ---------------------------------------------------------------------------------

TEST(ExpressionPerformance, MillionEvaluationsWithoutAllocation) {
  // The 4th convolution condition, a realistic T1 constraint.
  Expression e = Expression::parse(
      "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*((block_size_y*tile_size_y+"
      "(filter_height-1)))) < 12*1024");
  e.bind({"block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "use_shmem", "filter_width",
          "filter_height"});
  std::vector<std::vector<Value>> inputs;
  long want = 0;
  for (std::int64_t bx = 16; bx <= 256; bx += 16)
    for (std::int64_t by : {1, 2, 4, 8, 16})
      for (std::int64_t t = 1; t <= 4; ++t)
        for (std::int64_t shmem : {0, 1}) {
          inputs.push_back(ints({bx, by, t, 5 - t, shmem, 15, 15}));
          want += shmem == 0 || (bx * t + 14) * (by * (5 - t) + 14) < 12 * 1024;
        }
  const long rounds = 1000000 / static_cast<long>(inputs.size()) + 1;
  const long evaluations = rounds * static_cast<long>(inputs.size());
  ASSERT_GE(evaluations, 1000000);

  const long allocations_before = g_allocations.load();
  const auto start = std::chrono::steady_clock::now();
  long count = 0;
  for (long r = 0; r < rounds; ++r)
    for (const auto& slots : inputs) count += e.evaluate_bool(slots);
  const auto stop = std::chrono::steady_clock::now();
  const long allocations = g_allocations.load() - allocations_before;

  EXPECT_EQ(count, want * rounds);
  EXPECT_EQ(allocations, 0) << "evaluate_bool allocated on a numeric-only expression";
  const double ns = std::chrono::duration<double, std::nano>(stop - start).count() / evaluations;
  std::printf("[ perf     ] %ld evaluations, %.1f ns/eval\n", evaluations, ns);

  // evaluate() returning a numeric Value does not allocate either.
  const long before_value = g_allocations.load();
  std::int64_t sum = 0;
  Expression area = Expression::parse("ceil_div(block_size_x * tile_size_x, 32) * max(block_size_y, 4) // 2");
  area.bind({"block_size_x", "block_size_y", "tile_size_x"});
  const long after_parse = g_allocations.load();
  for (const auto& slots : inputs) sum += std::get<std::int64_t>(area.evaluate(slots));
  EXPECT_EQ(g_allocations.load() - after_parse, 0);
  EXPECT_GT(after_parse - before_value, 0);  // the counter does count (parse allocates)
  EXPECT_GT(sum, 0);
}

}  // namespace
}  // namespace ktune
