#include "tuner/core/expression/constant_folding.hpp"

#include <cstdint>
#include <variant>

namespace ktune::expression_detail {

namespace {

// A numeric constant's cell, or false.
bool numeric_constant(const Node& n, const std::vector<Value>& constants, Cell& c) {
  if (n.type != Node::kConstant) return false;
  const Value& v = constants[static_cast<std::size_t>(n.index)];
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    set_int(c, *i);
    return true;
  }
  if (const auto* d = std::get_if<double>(&v)) {
    set_dbl(c, *d);
    return true;
  }
  return false;
}

}  // namespace

NodePtr fold(NodePtr n, Program& program) {
  Cell a;
  Cell b;
  if (n->type == Node::kUnary && numeric_constant(*n->kids[0], program.constants, a)) {
    if (n->op == Op::kNeg) {
      if (a.kind == kIntKind) {
        if (a.i == INT64_MIN) return n;
        a.i = -a.i;
      } else {
        a.d = -a.d;
      }
    }
    return make_constant(a.kind == kIntKind ? Value{a.i} : Value{a.d}, n->column, program.constants);
  }
  if (n->type == Node::kBinary && numeric_constant(*n->kids[0], program.constants, a) && numeric_constant(*n->kids[1], program.constants, b)) {
    const Instr in = make_instr(n->op, kSS, 0, 0, 0, 0);
    try {
      Program::Temps temps;
      program.arith(in, a, b, temps);
    } catch (const InputError&) {
      return n;
    }
    return make_constant(a.kind == kIntKind ? Value{a.i} : Value{a.d}, n->column, program.constants);
  }
  return n;
}

}  // namespace ktune::expression_detail
