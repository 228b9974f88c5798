#include "tuner/core/expression/bytecode.hpp"

namespace ktune::expression_detail {

const char* op_symbol(Op op) {
  switch (op) {
    case Op::kNeg: return "unary -";
    case Op::kPos: return "unary +";
    case Op::kAdd: return "+";
    case Op::kSub: return "-";
    case Op::kMul: return "*";
    case Op::kDiv: return "/";
    case Op::kFloorDiv: return "//";
    case Op::kMod: return "%";
    case Op::kPow: return "**";
    case Op::kEq: return "==";
    case Op::kNe: return "!=";
    case Op::kLt: return "<";
    case Op::kLe: return "<=";
    case Op::kGt: return ">";
    case Op::kGe: return ">=";
    case Op::kIn: return "in";
    case Op::kNotIn: return "not in";
    default: return "?";
  }
}

}  // namespace ktune::expression_detail
