// The interpreter: runs the bytecode over a fixed stack of 16-byte cells on the C++ stack, with
// no name lookups and no allocation unless a string is concatenated (or the expression needs
// more than 64 stack cells). Strings are never copied: a cell points at the slot's or the
// constant's std::string. run() is const and keeps no state, so one bound expression may be
// evaluated from several threads.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tuner/core/expression/program.hpp"

namespace ktune::expression_detail {

Cell Program::run(std::span<const Value> slots, Temps& temps) const {
  if (!bound && !variables.empty())
    throw InputError(where + ": expression " + quote_text(text) + " evaluated before bind()");
  if (slots.size() < min_slots)
    throw InputError(where + ": expression " + quote_text(text) + " needs " + std::to_string(min_slots) +
                     " slot values, got " + std::to_string(slots.size()));

  constexpr int kInlineStack = 64;
  Cell inline_stack[kInlineStack];
  std::vector<Cell> heap_stack;
  Cell* const base = max_depth <= kInlineStack ? inline_stack : (heap_stack.resize(max_depth), heap_stack.data());
  Cell* sp = base;  // next free cell

  const Instr* const code_start = code.data();
  const Instr* pc = code_start;

// One case per operand mode of a binary op; BODY sees `Cell& a` (the result goes there) and
// `const Cell& b`.
#define KTUNE_BINARY_CASES(OP, BODY)                                \
  case dispatch(OP, kSS): {                                         \
    Cell& a = sp[-2];                                               \
    const Cell& b = sp[-1];                                         \
    --sp;                                                           \
    BODY;                                                           \
    break;                                                          \
  }                                                                 \
  case dispatch(OP, kSI): {                                         \
    Cell& a = sp[-1];                                               \
    Cell b;                                                         \
    set_int(b, in.arg);                                             \
    BODY;                                                           \
    break;                                                          \
  }                                                                 \
  case dispatch(OP, kSV): {                                         \
    Cell& a = sp[-1];                                               \
    Cell b;                                                         \
    load(in, b, slots[static_cast<std::size_t>(in.arg)]);           \
    BODY;                                                           \
    break;                                                          \
  }                                                                 \
  case dispatch(OP, kVI): {                                         \
    Cell& a = *sp++;                                                \
    load(in, a, slots[static_cast<std::size_t>(in.arg)]);           \
    Cell b;                                                         \
    set_int(b, in.arg2);                                            \
    BODY;                                                           \
    break;                                                          \
  }                                                                 \
  case dispatch(OP, kVV): {                                         \
    Cell& a = *sp++;                                                \
    load(in, a, slots[static_cast<std::size_t>(in.arg)]);           \
    Cell b;                                                         \
    load(in, b, slots[static_cast<std::size_t>(in.arg2)]);          \
    BODY;                                                           \
    break;                                                          \
  }

#define KTUNE_INT_ARITH(OP, BUILTIN)                                 \
  KTUNE_BINARY_CASES(OP, {                                           \
    if (a.kind == kIntKind && b.kind == kIntKind) {                  \
      if (BUILTIN(a.i, b.i, &a.i)) fail_overflow(in);                \
    } else {                                                         \
      arith(in, a, b, temps);                                        \
    }                                                                \
  })

// Python floor division / modulo, inline for the common positive divisor.
#define KTUNE_FLOOR_DIV_MOD(OP, RESULT)                              \
  KTUNE_BINARY_CASES(OP, {                                           \
    if (a.kind == kIntKind && b.kind == kIntKind && b.i > 0) {       \
      std::int64_t q = a.i / b.i;                                    \
      std::int64_t m = a.i % b.i;                                    \
      if (m < 0) {                                                   \
        --q;                                                         \
        m += b.i;                                                    \
      }                                                              \
      a.i = RESULT;                                                  \
    } else {                                                         \
      arith(in, a, b, temps);                                        \
    }                                                                \
  })

#define KTUNE_COMPARE(OP, CMP)                                                               \
  KTUNE_BINARY_CASES(OP, {                                                                   \
    const bool r = a.kind == kIntKind && b.kind == kIntKind ? (a.i CMP b.i) : compare(in, OP, a, b); \
    set_int(a, r ? 1 : 0);                                                                   \
  })

  while (true) {
    const Instr& in = *pc++;
    switch (in.code) {
      case dispatch(Op::kHalt, 0):
        return sp[-1];
      case dispatch(Op::kSmallInt, 0):
        set_int(*sp++, in.arg);
        break;
      case dispatch(Op::kConst, 0):
        load(in, *sp++, constants[static_cast<std::size_t>(in.arg)]);
        break;
      case dispatch(Op::kLoad, 0):
        load(in, *sp++, slots[static_cast<std::size_t>(in.arg)]);
        break;
      case dispatch(Op::kNeg, 0): {
        Cell& a = sp[-1];
        if (a.kind == kIntKind) {
          if (a.i == INT64_MIN) fail_overflow(in);
          a.i = -a.i;
        } else if (a.kind == kDblKind) {
          a.d = -a.d;
        } else {
          fail_unary(in);
        }
        break;
      }
      case dispatch(Op::kPos, 0):
        if (sp[-1].kind == kStrKind) fail_unary(in);
        break;
      case dispatch(Op::kNot, 0):
        set_int(sp[-1], truthy(sp[-1]) ? 0 : 1);
        break;
      KTUNE_INT_ARITH(Op::kAdd, __builtin_add_overflow)
      KTUNE_INT_ARITH(Op::kSub, __builtin_sub_overflow)
      KTUNE_INT_ARITH(Op::kMul, __builtin_mul_overflow)
      KTUNE_FLOOR_DIV_MOD(Op::kFloorDiv, q)
      KTUNE_FLOOR_DIV_MOD(Op::kMod, m)
      KTUNE_BINARY_CASES(Op::kDiv, arith(in, a, b, temps))
      KTUNE_BINARY_CASES(Op::kPow, arith(in, a, b, temps))
      KTUNE_COMPARE(Op::kEq, ==)
      KTUNE_COMPARE(Op::kNe, !=)
      KTUNE_COMPARE(Op::kLt, <)
      KTUNE_COMPARE(Op::kLe, <=)
      KTUNE_COMPARE(Op::kGt, >)
      KTUNE_COMPARE(Op::kGe, >=)
      KTUNE_BINARY_CASES(Op::kIn, set_int(a, compare(in, Op::kIn, a, b) ? 1 : 0))
      KTUNE_BINARY_CASES(Op::kNotIn, set_int(a, compare(in, Op::kNotIn, a, b) ? 1 : 0))
#undef KTUNE_COMPARE
#undef KTUNE_FLOOR_DIV_MOD
#undef KTUNE_INT_ARITH
#undef KTUNE_BINARY_CASES
      case dispatch(Op::kChain, 0): {
        const Op op = static_cast<Op>(in.aux);
        const Cell& a = sp[-2];
        const Cell& b = sp[-1];
        const bool r = (a.kind == kIntKind && b.kind == kIntKind) && op <= Op::kGe ? compare_with(op, a.i, b.i)
                                                                                   : compare(in, op, a, b);
        --sp;
        if (r) {
          sp[-1] = sp[0];
        } else {
          set_int(sp[-1], 0);
          pc = code_start + in.arg;
        }
        break;
      }
      case dispatch(Op::kInList, 0): {
        const int n = in.arg;
        Cell* items = sp - n;
        const Cell& x = items[-1];
        bool found = false;
        for (int k = 0; k < n && !found; ++k) found = equal(x, items[k]);
        sp = items;
        set_int(sp[-1], (found != (in.aux != 0)) ? 1 : 0);
        break;
      }
      case dispatch(Op::kJumpIfFalseOrPop, 0):
        if (!truthy(sp[-1])) {
          pc = code_start + in.arg;
        } else {
          --sp;
        }
        break;
      case dispatch(Op::kJumpIfTrueOrPop, 0):
        if (truthy(sp[-1])) {
          pc = code_start + in.arg;
        } else {
          --sp;
        }
        break;
      case dispatch(Op::kPopJumpIfFalse, 0):
        --sp;
        if (!truthy(*sp)) pc = code_start + in.arg;
        break;
      case dispatch(Op::kJump, 0):
        pc = code_start + in.arg;
        break;
      case dispatch(Op::kCall, 0):
        sp -= in.arg;
        call(in, sp, in.arg);
        ++sp;
        break;
      default:
        __builtin_unreachable();  // the compiler emits only the codes above
    }
  }
}

}  // namespace ktune::expression_detail
