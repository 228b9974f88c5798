// The expression compiler: turns the syntax tree into bytecode, with jumps for short-circuit
// logic and binary ops that read variables and small int constants directly (so `x * y <= 1024`
// is two instructions).
#pragma once

#include "tuner/core/expression/ast.hpp"
#include "tuner/core/expression/program.hpp"

namespace ktune::expression_detail {

// Appends the bytecode of `root` and a final kHalt to program.code, records each variable
// operand in program.loads for bind(), and sets program.max_depth.
void compile_bytecode(const Node& root, Program& program);

}  // namespace ktune::expression_detail
