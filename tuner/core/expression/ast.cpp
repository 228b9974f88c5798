#include "tuner/core/expression/ast.hpp"

#include <utility>

namespace ktune::expression_detail {

NodePtr make_constant(Value v, int column, std::vector<Value>& constants) {
  auto n = make_node(Node::kConstant, column);
  n->index = static_cast<int>(constants.size());
  constants.push_back(std::move(v));
  return n;
}

}  // namespace ktune::expression_detail
