// The syntax tree the parser builds (parse time only; the compiler turns it into bytecode).
#pragma once

#include <memory>
#include <vector>

#include "tuner/core/expression/bytecode.hpp"
#include "tuner/core/value.hpp"

namespace ktune::expression_detail {

struct Node {
  enum Type { kConstant, kVariable, kUnary, kBinary, kNotNode, kAnd, kOr, kTernary, kCompare, kCall, kList };
  Type type;
  int column = 0;
  Op op = Op::kHalt;       // unary/binary operator
  int index = 0;           // constant index / variable index / function id
  std::vector<Op> ops;     // comparison chain operators
  std::vector<int> op_columns;
  std::vector<std::unique_ptr<Node>> kids;
};
using NodePtr = std::unique_ptr<Node>;

inline NodePtr make_node(Node::Type type, int column) {
  auto n = std::make_unique<Node>();
  n->type = type;
  n->column = column;
  return n;
}

// A kConstant node for `v`, which is appended to `constants` (the node holds its index).
NodePtr make_constant(Value v, int column, std::vector<Value>& constants);

}  // namespace ktune::expression_detail
