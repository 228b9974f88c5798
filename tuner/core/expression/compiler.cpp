#include "tuner/core/expression/compiler.hpp"

#include <algorithm>
#include <cstdint>
#include <variant>
#include <vector>

namespace ktune::expression_detail {

namespace {

class Compiler {
 public:
  explicit Compiler(Program& program) : program_(program) {}

  void compile_program(const Node& root) {
    compile(root);
    emit(Op::kHalt, 0, 0, 0, 0, 0);
    program_.max_depth = max_depth_;
  }

 private:
  std::size_t emit(Op op, std::uint8_t aux, int column, std::int32_t arg, int stack_delta,
                   std::uint8_t mode = kSS, std::int32_t arg2 = 0) {
    program_.code.push_back(make_instr(op, mode, aux, column, arg, arg2));
    depth_ += stack_delta;
    max_depth_ = std::max(max_depth_, depth_);
    return program_.code.size() - 1;
  }
  static bool small_int(const Node& n, const std::vector<Value>& constants, std::int32_t& out) {
    if (n.type != Node::kConstant) return false;
    const auto* i = std::get_if<std::int64_t>(&constants[static_cast<std::size_t>(n.index)]);
    if (i == nullptr || *i < INT32_MIN || *i > INT32_MAX) return false;
    out = static_cast<std::int32_t>(*i);
    return true;
  }

  void slot_ref(std::size_t pc, bool second, int variable) {
    program_.loads.push_back({static_cast<std::uint32_t>(pc), second, static_cast<std::uint32_t>(variable)});
  }

  // Emits `lhs op rhs`, folding variables and small int constants into the instruction.
  void emit_binary(Op op, int column, const Node& lhs, const Node& rhs) {
    std::int32_t imm = 0;
    const bool rhs_imm = small_int(rhs, program_.constants, imm);
    const bool rhs_var = rhs.type == Node::kVariable;
    if (lhs.type == Node::kVariable && (rhs_imm || rhs_var)) {
      const std::size_t pc = emit(op, 0, column, lhs.index, 1, rhs_imm ? kVI : kVV, rhs_imm ? imm : rhs.index);
      slot_ref(pc, false, lhs.index);
      if (rhs_var) slot_ref(pc, true, rhs.index);
      return;
    }
    compile(lhs);
    emit_with_rhs(op, column, rhs);
  }

  // Emits `op` applied to the value on the stack and `rhs`.
  void emit_with_rhs(Op op, int column, const Node& rhs) {
    std::int32_t imm = 0;
    if (small_int(rhs, program_.constants, imm)) {
      emit(op, 0, column, imm, 0, kSI);
    } else if (rhs.type == Node::kVariable) {
      slot_ref(emit(op, 0, column, rhs.index, 0, kSV), false, rhs.index);
    } else {
      compile(rhs);
      emit(op, 0, column, 0, -1, kSS);
    }
  }

  void patch_to_here(std::size_t pc) { program_.code[pc].arg = static_cast<std::int32_t>(program_.code.size()); }

  void compile(const Node& n) {
    switch (n.type) {
      case Node::kConstant: {
        const Value& v = program_.constants[n.index];
        const auto* i = std::get_if<std::int64_t>(&v);
        if (i != nullptr && *i >= INT32_MIN && *i <= INT32_MAX) {
          emit(Op::kSmallInt, 0, n.column, static_cast<std::int32_t>(*i), 1);
        } else {
          emit(Op::kConst, 0, n.column, n.index, 1);
        }
        return;
      }
      case Node::kVariable: {
        slot_ref(emit(Op::kLoad, 0, n.column, n.index, 1), false, n.index);
        return;
      }
      case Node::kUnary:
        compile(*n.kids[0]);
        emit(n.op, 0, n.column, 0, 0);
        return;
      case Node::kNotNode:
        compile(*n.kids[0]);
        emit(Op::kNot, 0, n.column, 0, 0);
        return;
      case Node::kBinary:
        emit_binary(n.op, n.column, *n.kids[0], *n.kids[1]);
        return;
      case Node::kAnd:
      case Node::kOr: {
        const Op jump = n.type == Node::kAnd ? Op::kJumpIfFalseOrPop : Op::kJumpIfTrueOrPop;
        std::vector<std::size_t> exits;
        for (std::size_t k = 0; k < n.kids.size(); ++k) {
          compile(*n.kids[k]);
          if (k + 1 < n.kids.size()) exits.push_back(emit(jump, 0, n.column, 0, -1));
        }
        for (std::size_t pc : exits) patch_to_here(pc);
        return;
      }
      case Node::kTernary: {
        compile(*n.kids[0]);
        const std::size_t to_else = emit(Op::kPopJumpIfFalse, 0, n.column, 0, -1);
        compile(*n.kids[1]);
        const std::size_t to_end = emit(Op::kJump, 0, n.column, 0, -1);
        patch_to_here(to_else);
        compile(*n.kids[2]);
        patch_to_here(to_end);
        return;
      }
      case Node::kCompare: {
        const std::size_t last = n.ops.size() - 1;
        if (last == 0 && n.kids[1]->type != Node::kList) {
          emit_binary(n.ops[0], n.op_columns[0], *n.kids[0], *n.kids[1]);
          return;
        }
        compile(*n.kids[0]);
        std::vector<std::size_t> exits;
        for (std::size_t k = 0; k < last; ++k) {
          compile(*n.kids[k + 1]);
          exits.push_back(
              emit(Op::kChain, static_cast<std::uint8_t>(n.ops[k]), n.op_columns[k], 0, -1));
        }
        const Node& rhs = *n.kids[last + 1];
        if (rhs.type == Node::kList) {
          for (const auto& item : rhs.kids) compile(*item);
          const int count = static_cast<int>(rhs.kids.size());
          emit(Op::kInList, n.ops[last] == Op::kNotIn ? 1 : 0, n.op_columns[last], count, -count);
        } else {
          emit_with_rhs(n.ops[last], n.op_columns[last], rhs);
        }
        for (std::size_t pc : exits) patch_to_here(pc);
        return;
      }
      case Node::kCall: {
        for (const auto& arg : n.kids) compile(*arg);
        const int argc = static_cast<int>(n.kids.size());
        emit(Op::kCall, static_cast<std::uint8_t>(n.index), n.column, argc, 1 - argc);
        return;
      }
      case Node::kList:
        break;  // only reachable through kCompare
    }
  }

  Program& program_;
  int depth_ = 0;
  int max_depth_ = 0;
};

}  // namespace

void compile_bytecode(const Node& root, Program& program) { Compiler(program).compile_program(root); }

}  // namespace ktune::expression_detail
