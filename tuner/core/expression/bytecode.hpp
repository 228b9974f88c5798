// The instruction set the expression compiler emits and the interpreter runs: flat stack
// bytecode of 12-byte instructions.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ktune::expression_detail {

enum class Op : std::uint8_t {
  kHalt,
  kSmallInt,  // push arg (an int that fits int32)
  kConst,     // push constants[arg]
  kLoad,      // push slots[arg] (arg is the slot once bound)
  kNeg,
  kPos,
  kNot,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  // Comparisons (keep together, kEq first, kNotIn last).
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,     // substring test: a in b with b a string
  kNotIn,
  kChain,             // aux = comparison op; [a b] -> [b] if a op b holds, else [False] and jump
  kInList,            // aux = 1 for `not in`; [x e1..en] -> [x in (e1..en)], arg = n
  kJumpIfFalseOrPop,  // and
  kJumpIfTrueOrPop,   // or
  kPopJumpIfFalse,    // ternary condition
  kJump,
  kCall,  // aux = function, arg = argument count
};

// Binary arithmetic and the last comparison of a chain take their operands from the stack, an
// immediate int32 or a slot, so that `x * y`, `x - 1` or `x == 0` is one instruction:
//   kSS: [a b] -> [a op b]        kSI: [a] -> [a op arg]          kSV: [a] -> [a op slots[arg]]
//   kVI: [] -> [slots[arg] op arg2]                              kVV: [] -> [slots[arg] op slots[arg2]]
enum Mode : std::uint8_t { kSS, kSI, kSV, kVI, kVV };

// Dispatch key of an instruction: the op and its operand mode.
constexpr std::uint8_t dispatch(Op op, std::uint8_t mode) {
  return static_cast<std::uint8_t>(static_cast<unsigned>(op) * 8 + mode);
}
static_assert(static_cast<unsigned>(Op::kCall) * 8 + kVV < 256);

struct Instr {
  std::uint8_t code;     // dispatch(op, mode)
  std::uint8_t aux;      // comparison op of kChain, negation of kInList, function of kCall
  std::uint16_t column;  // 1-based column of the operator, for runtime errors
  std::int32_t arg;      // immediate, slot, jump target, count
  std::int32_t arg2;     // immediate or slot of kVI / kVV

  Op op() const { return static_cast<Op>(code >> 3); }
};
static_assert(sizeof(Instr) == 12);

inline Instr make_instr(Op op, std::uint8_t mode, std::uint8_t aux, int column, std::int32_t arg,
                        std::int32_t arg2) {
  return Instr{dispatch(op, mode), aux, static_cast<std::uint16_t>(std::clamp(column, 0, 65535)), arg, arg2};
}

// The operator as written in the source, for error messages ("unary -", "//", "not in").
const char* op_symbol(Op op);

}  // namespace ktune::expression_detail
