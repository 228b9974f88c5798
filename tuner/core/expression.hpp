// The expression language of search spaces: constraints, launch geometry and T1 `Conditions`.
//
// Syntax (Python-like, so T1 specs from Kernel Tuner, KTT and BAT import as they are):
//   literals      12  0x1f  1.5  1e-3  True  False  'text'  "text"
//   names         any identifier; parameters, problem dims and device limits share one namespace
//   arithmetic    + - * /  // (floor division)  % (Python modulo)  ** (power, right-assoc)  unary - +
//   comparison    == != < <= > >=, chained as in Python: 1 <= x < 8
//   logic         and  or  not   (also && || ! for C-style spaces)
//   conditional   a if cond else b
//   membership    x in [1, 2, 4]   x not in (3, 5)
//   calls         min(a, b, ...)  max(...)  abs(x)  int(x)  float(x)  ceil(x)  floor(x)
//                 ceil_div(a, b)  round_up(a, b)  log2(x)  is_pow2(x)
//
// An expression is parsed once, then bound to variable slots once, then evaluated many times
// over a span of values indexed by slot, with no name lookups or allocation on the hot path:
//
//   auto expr = Expression::parse("block_x * block_y <= max_threads and tile % 4 == 0");
//   expr.bind({"block_x", "block_y", "tile", "max_threads"});   // slot order
//   bool ok = expr.evaluate_bool(values);                         // values[i] is slot i
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/core/value.hpp"

namespace ktune {

class Expression {
 public:
  // Throws InputError with the text, the column and what was expected.
  // `where` names the source in messages (e.g. "search_spaces/rmsnorm.cpu.json: constraints[2]").
  static Expression parse(std::string_view text, const std::string& where = "expression");

  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;
  Expression(const Expression&);
  Expression& operator=(const Expression&);
  ~Expression();

  const std::string& text() const;
  // Distinct variable names the expression reads, in first-use order.
  const std::vector<std::string>& variables() const;

  // Resolves every variable to its index in `slot_names`; throws InputError naming an unknown
  // variable and listing the known ones.
  void bind(const std::vector<std::string>& slot_names);

  // Evaluate after bind(). Type errors (e.g. a string in arithmetic, division by zero) throw
  // InputError naming the expression.
  Value evaluate(std::span<const Value> slots) const;
  bool evaluate_bool(std::span<const Value> slots) const;  // Python truthiness

 private:
  struct Impl;
  explicit Expression(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
