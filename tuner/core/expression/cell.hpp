// The interpreter's stack cell: an int, a float or a pointer to a string owned elsewhere (a slot
// value, a constant or a concatenation temporary), with the Python semantics shared by the
// interpreter and the constant folder (truthiness, ==, ordering).
#pragma once

#include <cstdint>
#include <string>

#include "tuner/core/expression/bytecode.hpp"
#include "tuner/core/value.hpp"

namespace ktune::expression_detail {

enum Kind : std::uint8_t { kIntKind, kDblKind, kStrKind };

struct Cell {
  Kind kind;
  union {
    std::int64_t i;
    double d;
    const std::string* s;
  };
};

inline double num(const Cell& c) { return c.kind == kIntKind ? static_cast<double>(c.i) : c.d; }

inline bool truthy(const Cell& c) {
  switch (c.kind) {
    case kIntKind: return c.i != 0;
    case kDblKind: return c.d != 0.0;
    default: return !c.s->empty();
  }
}

inline void set_int(Cell& c, std::int64_t v) {
  c.kind = kIntKind;
  c.i = v;
}
inline void set_dbl(Cell& c, double v) {
  c.kind = kDblKind;
  c.d = v;
}

// Python's name of the cell's type ("int", "float", "str"), for error messages.
const char* type_name(const Cell& c);

// The cell's value as Python would print it in an error message (strings quoted).
std::string describe(const Cell& c);

Value to_value(const Cell& c);

template <typename T>
inline bool compare_with(Op op, const T& a, const T& b) {
  switch (op) {
    case Op::kEq: return a == b;
    case Op::kNe: return a != b;
    case Op::kLt: return a < b;
    case Op::kLe: return a <= b;
    case Op::kGt: return a > b;
    default: return a >= b;
  }
}

// Python's ==: numbers compare by value across int/float, strings by content, mixed are unequal.
inline bool equal(const Cell& a, const Cell& b) {
  if (a.kind == kIntKind && b.kind == kIntKind) return a.i == b.i;
  if (a.kind != kStrKind && b.kind != kStrKind) return num(a) == num(b);
  if (a.kind == kStrKind && b.kind == kStrKind) return *a.s == *b.s;
  return false;
}

}  // namespace ktune::expression_detail
