// The interpreter's evaluation of built-in function calls (the table is in functions.hpp).
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tuner/core/expression/functions.hpp"
#include "tuner/core/expression/program.hpp"

namespace ktune::expression_detail {

namespace {

constexpr double kTwo63 = 9223372036854775808.0;

inline bool fits_int64(double d) { return d >= -kTwo63 && d < kTwo63; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::int64_t Program::to_int_checked(const Instr& in, double d, const char* fn) const {
  if (std::isnan(d)) fail(in, std::string("cannot convert NaN to an integer in ") + fn + "()");
  if (!fits_int64(d)) fail(in, std::string("value out of integer range in ") + fn + "(): " + to_string(Value{d}));
  return static_cast<std::int64_t>(d);
}

void Program::call(const Instr& in, Cell* args, int argc) const {
  Cell& r = args[0];
  const char* fn = function_name(in.aux);
  auto need_number = [&](const Cell& c) {
    if (c.kind == kStrKind) fail(in, std::string(fn) + "() expects a number, got the string " + describe(c));
  };
  switch (static_cast<Func>(in.aux)) {
    case kMin:
    case kMax: {
      // Python keeps the first of equal items and the original type.
      std::size_t best = 0;
      for (int k = 1; k < argc; ++k) {
        const bool better = in.aux == kMin ? compare(in, Op::kLt, args[k], args[best])
                                           : compare(in, Op::kGt, args[k], args[best]);
        if (better) best = static_cast<std::size_t>(k);
      }
      r = args[best];
      return;
    }
    case kAbs:
      need_number(r);
      if (r.kind == kIntKind) {
        if (r.i == INT64_MIN) fail(in, "integer overflow in abs()");
        r.i = r.i < 0 ? -r.i : r.i;
      } else {
        r.d = std::fabs(r.d);
      }
      return;
    case kIntFn:
      if (r.kind == kDblKind) {
        set_int(r, to_int_checked(in, std::trunc(r.d), fn));
      } else if (r.kind == kStrKind) {
        std::string_view s = trim(*r.s);
        if (!s.empty() && s.front() == '+') s.remove_prefix(1);
        std::int64_t v = 0;
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
          fail(in, "invalid literal for int(): " + describe(r));
        set_int(r, v);
      }
      return;
    case kFloatFn:
      if (r.kind == kIntKind) {
        set_dbl(r, static_cast<double>(r.i));
      } else if (r.kind == kStrKind) {
        std::string_view s = trim(*r.s);
        if (!s.empty() && s.front() == '+') s.remove_prefix(1);
        double v = 0.0;
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ptr != s.data() + s.size() ||
            (ec != std::errc() && ec != std::errc::result_out_of_range))
          fail(in, "could not convert string to float: " + describe(r));
        if (ec == std::errc::result_out_of_range) v = std::strtod(std::string(s).c_str(), nullptr);
        set_dbl(r, v);
      }
      return;
    case kCeil:
    case kFloor:
      need_number(r);
      if (r.kind == kDblKind) {
        const double v = in.aux == kCeil ? std::ceil(r.d) : std::floor(r.d);
        if (std::isinf(v)) fail(in, std::string("cannot convert infinity to an integer in ") + fn + "()");
        set_int(r, to_int_checked(in, v, fn));
      }
      return;
    case kCeilDiv:
    case kRoundUp: {
      Cell& b = args[1];
      need_number(r);
      need_number(b);
      if (r.kind == kIntKind && b.kind == kIntKind) {
        std::int64_t x = r.i;
        std::int64_t y = b.i;
        if (y == 0) fail(in, std::string(fn) + "() by zero");
        if (in.aux == kRoundUp) {
          if (y == INT64_MIN) fail(in, "integer overflow in round_up()");
          y = y < 0 ? -y : y;
        }
        if (x == INT64_MIN && y == -1) fail(in, std::string("integer overflow in ") + fn + "()");
        std::int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) == (y < 0))) ++q;
        if (in.aux == kRoundUp) {
          if (__builtin_mul_overflow(q, y, &q)) fail(in, "integer overflow in round_up()");
        }
        r.i = q;
        return;
      }
      double x = num(r);
      double y = num(b);
      if (y == 0.0) fail(in, std::string(fn) + "() by zero");
      if (in.aux == kCeilDiv) {
        const double v = std::ceil(x / y);
        if (std::isinf(v)) fail(in, "cannot convert infinity to an integer in ceil_div()");
        set_int(r, to_int_checked(in, v, fn));
      } else {
        y = std::fabs(y);
        set_dbl(r, std::ceil(x / y) * y);
      }
      return;
    }
    case kLog2: {
      need_number(r);
      const double x = num(r);
      if (!(x > 0.0)) fail(in, "math domain error: log2(" + describe(r) + ")");
      set_dbl(r, std::log2(x));
      return;
    }
    case kIsPow2: {
      need_number(r);
      bool pow2 = false;
      if (r.kind == kIntKind) {
        pow2 = r.i > 0 && (r.i & (r.i - 1)) == 0;
      } else if (std::isfinite(r.d) && r.d >= 1.0) {
        int exponent = 0;
        pow2 = std::frexp(r.d, &exponent) == 0.5;
      }
      set_int(r, pow2 ? 1 : 0);
      return;
    }
  }
}

}  // namespace ktune::expression_detail
