// The expression parser: recursive descent over the tokens with Python's precedence, folding
// numeric constants as it goes.
#pragma once

#include "tuner/core/expression/ast.hpp"
#include "tuner/core/expression/program.hpp"

namespace ktune::expression_detail {

// Parses program.text into a syntax tree, recording its variables (in first-use order) and
// constants in `program`. Throws InputError naming program.where, the column and what was
// expected.
NodePtr parse_ast(Program& program);

}  // namespace ktune::expression_detail
