// Constant folding, applied by the parser as it builds each unary or binary node.
#pragma once

#include "tuner/core/expression/ast.hpp"
#include "tuner/core/expression/program.hpp"

namespace ktune::expression_detail {

// Constant folding of numeric unary and binary operations (12*1024, -1). An operation that
// would fail (1/0) is left for run time, where it may be short-circuited away as in Python.
// Returns `n` unchanged, or a constant node whose value is appended to program.constants.
NodePtr fold(NodePtr n, Program& program);

}  // namespace ktune::expression_detail
