// A compiled expression: its text, variables, constants and bytecode, and the interpreter that
// runs the bytecode (interpreter.cpp) with its slow paths for operators (operators.cpp) and
// built-in calls (call.cpp). Expression::Impl is this type; the parser, the constant folder and
// the compiler fill it in, Expression::bind() patches slot indices into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <forward_list>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "tuner/core/errors.hpp"
#include "tuner/core/expression/bytecode.hpp"
#include "tuner/core/expression/cell.hpp"
#include "tuner/core/expression/messages.hpp"
#include "tuner/core/value.hpp"

namespace ktune::expression_detail {

struct Program {
  std::string text;
  std::string where;
  std::vector<std::string> variables;
  std::vector<Value> constants;
  std::vector<Instr> code;
  struct SlotRef {
    std::uint32_t pc;
    bool second;  // arg2 rather than arg
    std::uint32_t variable;
  };
  std::vector<SlotRef> loads;  // instruction operands that bind() sets to slot indices
  int max_depth = 0;
  bool bound = false;
  std::size_t min_slots = 0;  // 1 + highest slot index used

  // Error paths are out of line so that the interpreter loop stays small.
  [[noreturn, gnu::cold, gnu::noinline]] void fail(const Instr& in, const std::string& what) const {
    throw InputError(where + ": " + what + " at column " + std::to_string(in.column) + " in " +
                     quote_text(text));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_types(const Instr& in, const Cell& a, const Cell& b) const {
    fail(in, std::string("unsupported operand types for ") + op_symbol(in.op()) + ": '" +
                 type_name(a) + "' and '" + type_name(b) + "'");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_overflow(const Instr& in) const {
    fail(in, std::string("integer overflow in ") + op_symbol(in.op()));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_unary(const Instr& in) const {
    fail(in, std::string("bad operand type for ") + op_symbol(in.op()) + ": 'str'");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_empty_slot(const Instr& in) const {
    fail(in, "slot " + std::to_string(in.arg) + " holds no value");
  }

  // Strings made by concatenation during one evaluation; cells point into it.
  using Temps = std::forward_list<std::string>;

  // Slow paths (anything but int-int fast cases).
  [[gnu::noinline]] bool compare(const Instr& in, Op op, const Cell& a, const Cell& b) const;
  [[gnu::noinline]] void arith(const Instr& in, Cell& a, const Cell& b, Temps& temps) const;
  [[gnu::noinline]] void call(const Instr& in, Cell* args, int argc) const;
  [[gnu::always_inline]] void load(const Instr& in, Cell& c, const Value& v) const {
    switch (v.index()) {
      case 0: set_int(c, *std::get_if<0>(&v)); return;
      case 1: set_dbl(c, *std::get_if<1>(&v)); return;
      case 2:
        c.kind = kStrKind;
        c.s = std::get_if<2>(&v);
        return;
      default: fail_empty_slot(in);
    }
  }
  std::int64_t to_int_checked(const Instr& in, double d, const char* fn) const;
  // Runs the bytecode over `slots` (after bind()); the result may point into `temps`.
  Cell run(std::span<const Value> slots, Temps& temps) const;
};

}  // namespace ktune::expression_detail
