// The expression language: a recursive-descent parser builds a small AST (folding numeric
// constants), which is compiled once into flat stack bytecode: 12-byte instructions, jumps for
// short-circuit logic, binary ops that read variables and small int constants directly (so
// `x * y <= 1024` is two instructions), and slot indices patched in by bind(). evaluate() runs the
// bytecode over a fixed stack of 16-byte cells on the C++ stack: no name lookups, no allocation
// unless a string is concatenated (or the expression needs more than 64 stack cells). Strings are
// never copied: a cell points at the slot's or the constant's std::string. evaluate() is const
// and keeps no state, so one bound expression may be evaluated from several threads.
//
// Semantics follow Python 3 (T1 `Conditions` are Python expressions): int/float arithmetic with
// Python floor division and modulo, `**` right-associative and tighter than unary minus, chained
// comparisons, short-circuit `and`/`or` that yield an operand, `x if c else y`, `in` on list or
// tuple literals and substrings. Booleans are int64 0/1. Integer overflow, which Python avoids with
// big integers, is reported as an error instead of wrapping.
//
// C-style spellings: `&&` = and, `||` = or, `!` = not. `!` binds like unary minus (as in C), so
// `!a < b` is `(!a) < b`, while `not a < b` is Python's `not (a < b)`.
//
// This file is the public interface. Each phase has its own file in tuner/core/expression/:
// lexer, parser (with constant_folding), compiler, and interpreter (with operators and call,
// its slow paths). program.hpp declares the compiled form they share.
#include "tuner/core/expression.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "tuner/core/errors.hpp"
#include "tuner/core/expression/compiler.hpp"
#include "tuner/core/expression/messages.hpp"
#include "tuner/core/expression/parser.hpp"
#include "tuner/core/expression/program.hpp"

namespace ktune {

// The compiled expression; its parts live in tuner/core/expression/.
struct Expression::Impl : expression_detail::Program {};

Expression::Expression(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::Expression(const Expression& other)
    : impl_(other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr) {}
Expression& Expression::operator=(const Expression& other) {
  if (this != &other) impl_ = other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr;
  return *this;
}
Expression::~Expression() = default;

Expression Expression::parse(std::string_view text, const std::string& where) {
  auto impl = std::make_unique<Impl>();
  impl->text = std::string(text);
  impl->where = where;
  const expression_detail::NodePtr root = expression_detail::parse_ast(*impl);
  expression_detail::compile_bytecode(*root, *impl);
  impl->bound = impl->variables.empty();
  return Expression(std::move(impl));
}

const std::string& Expression::text() const {
  static const std::string empty;
  return impl_ ? impl_->text : empty;
}

const std::vector<std::string>& Expression::variables() const {
  static const std::vector<std::string> empty;
  return impl_ ? impl_->variables : empty;
}

void Expression::bind(const std::vector<std::string>& slot_names) {
  if (!impl_) throw InputError("expression: bind() on a moved-from expression");
  Impl& impl = *impl_;
  std::vector<std::uint32_t> slot_of(impl.variables.size());
  std::vector<std::string> unknown;
  for (std::size_t v = 0; v < impl.variables.size(); ++v) {
    std::size_t k = 0;
    while (k < slot_names.size() && slot_names[k] != impl.variables[v]) ++k;
    if (k == slot_names.size()) {
      unknown.push_back("'" + impl.variables[v] + "'");
    } else {
      slot_of[v] = static_cast<std::uint32_t>(k);
    }
  }
  if (!unknown.empty()) {
    throw InputError(impl.where + ": unknown variable" + (unknown.size() > 1 ? "s " : " ") +
                     join_names(unknown) + " in " + expression_detail::quote_text(impl.text) + "; known names: " +
                     (slot_names.empty() ? std::string("(none)") : join_names(slot_names)));
  }
  std::size_t min_slots = 0;
  for (const auto& ref : impl.loads) {
    const std::uint32_t slot = slot_of[ref.variable];
    (ref.second ? impl.code[ref.pc].arg2 : impl.code[ref.pc].arg) = static_cast<std::int32_t>(slot);
    min_slots = std::max<std::size_t>(min_slots, slot + 1);
  }
  impl.min_slots = min_slots;
  impl.bound = true;
}

Value Expression::evaluate(std::span<const Value> slots) const {
  if (!impl_) throw InputError("expression: evaluate() on a moved-from expression");
  Impl::Temps temps;
  return expression_detail::to_value(impl_->run(slots, temps));
}

bool Expression::evaluate_bool(std::span<const Value> slots) const {
  if (!impl_) throw InputError("expression: evaluate() on a moved-from expression");
  Impl::Temps temps;
  return expression_detail::truthy(impl_->run(slots, temps));
}

}  // namespace ktune
