// The interpreter's slow paths for comparisons and arithmetic: mixed int/float, strings, errors
// and overflow. The interpreter handles int-int cases inline and calls these for the rest; the
// constant folder calls arith() too.
#include <cmath>
#include <cstdint>
#include <string>

#include "tuner/core/expression/program.hpp"

namespace ktune::expression_detail {

namespace {

// CPython's float floor division and modulo.
double py_float_mod(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

double py_float_floordiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div != 0.0) {
    double floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    return floordiv;
  }
  return std::copysign(0.0, a / b);
}

}  // namespace

bool Program::compare(const Instr& in, Op op, const Cell& a, const Cell& b) const {
  if (op <= Op::kGe) {
    if (a.kind == kIntKind && b.kind == kIntKind) return compare_with(op, a.i, b.i);
    if (a.kind != kStrKind && b.kind != kStrKind) return compare_with(op, num(a), num(b));
    if (a.kind == kStrKind && b.kind == kStrKind) return compare_with(op, a.s->compare(*b.s), 0);
    if (op == Op::kEq) return false;
    if (op == Op::kNe) return true;
    fail(in, std::string("'") + op_symbol(op) + "' not supported between '" + type_name(a) + "' and '" +
                 type_name(b) + "'");
  }
  // in / not in with an expression on the right: substring test.
  if (b.kind != kStrKind) fail(in, std::string("argument of type '") + type_name(b) + "' is not iterable");
  if (a.kind != kStrKind)
    fail(in, std::string("'in <string>' requires a string as left operand, not '") + type_name(a) + "'");
  const bool found = b.s->find(*a.s) != std::string::npos;
  return op == Op::kIn ? found : !found;
}

void Program::arith(const Instr& in, Cell& a, const Cell& b, Temps& temps) const {
  const Op op = in.op();
  if (a.kind == kIntKind && b.kind == kIntKind) {
    const std::int64_t x = a.i;
    const std::int64_t y = b.i;
    std::int64_t r = 0;
    switch (op) {
      case Op::kAdd:
        if (__builtin_add_overflow(x, y, &r)) fail_overflow(in);
        a.i = r;
        return;
      case Op::kSub:
        if (__builtin_sub_overflow(x, y, &r)) fail_overflow(in);
        a.i = r;
        return;
      case Op::kMul:
        if (__builtin_mul_overflow(x, y, &r)) fail_overflow(in);
        a.i = r;
        return;
      case Op::kDiv:
        if (y == 0) fail(in, "division by zero");
        set_dbl(a, static_cast<double>(x) / static_cast<double>(y));
        return;
      case Op::kFloorDiv: {
        if (y == 0) fail(in, "integer division by zero");
        if (x == INT64_MIN && y == -1) fail_overflow(in);
        std::int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        a.i = q;
        return;
      }
      case Op::kMod: {
        if (y == 0) fail(in, "integer modulo by zero");
        if (y == -1) {
          a.i = 0;
          return;
        }
        std::int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        a.i = m;
        return;
      }
      case Op::kPow: {
        if (y < 0) {
          if (x == 0) fail(in, "zero to a negative power");
          set_dbl(a, std::pow(static_cast<double>(x), static_cast<double>(y)));
          return;
        }
        std::int64_t result = 1;
        std::int64_t base = x;
        std::int64_t e = y;
        while (e > 0) {
          if (e & 1) {
            if (__builtin_mul_overflow(result, base, &result)) fail_overflow(in);
          }
          e >>= 1;
          if (e > 0 && __builtin_mul_overflow(base, base, &base)) {
            // Remaining factors include base^2 with |base| >= 2: the result overflows too.
            fail_overflow(in);
          }
        }
        a.i = result;
        return;
      }
      default:
        break;
    }
  } else if (a.kind != kStrKind && b.kind != kStrKind) {
    const double x = num(a);
    const double y = num(b);
    switch (op) {
      case Op::kAdd: set_dbl(a, x + y); return;
      case Op::kSub: set_dbl(a, x - y); return;
      case Op::kMul: set_dbl(a, x * y); return;
      case Op::kDiv:
        if (y == 0.0) fail(in, "float division by zero");
        set_dbl(a, x / y);
        return;
      case Op::kFloorDiv:
        if (y == 0.0) fail(in, "float floor division by zero");
        set_dbl(a, py_float_floordiv(x, y));
        return;
      case Op::kMod:
        if (y == 0.0) fail(in, "float modulo by zero");
        set_dbl(a, py_float_mod(x, y));
        return;
      case Op::kPow: {
        if (x == 0.0 && y < 0.0) fail(in, "zero to a negative power");
        if (x < 0.0 && std::isfinite(y) && std::floor(y) != y)
          fail(in, "negative number " + describe(a) + " to a fractional power");
        const double r = std::pow(x, y);
        if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail(in, "float overflow in **");
        set_dbl(a, r);
        return;
      }
      default:
        break;
    }
  } else if (op == Op::kAdd && a.kind == kStrKind && b.kind == kStrKind) {
    temps.push_front(*a.s + *b.s);
    a.s = &temps.front();
    return;
  }
  fail_types(in, a, b);
}

}  // namespace ktune::expression_detail
