// The built-in functions an expression may call (min, max, ceil_div, ...): their ids, names and
// argument counts. The parser checks calls against this table; the interpreter evaluates them in
// Program::call (call.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace ktune::expression_detail {

enum Func : std::uint8_t {
  kMin,
  kMax,
  kAbs,
  kIntFn,
  kFloatFn,
  kCeil,
  kFloor,
  kCeilDiv,
  kRoundUp,
  kLog2,
  kIsPow2,
};

struct FuncInfo {
  const char* name;
  Func id;
  int min_args;
  int max_args;  // -1: unbounded
};

inline constexpr FuncInfo kFunctions[] = {
    {"abs", kAbs, 1, 1},           {"ceil", kCeil, 1, 1},         {"ceil_div", kCeilDiv, 2, 2},
    {"float", kFloatFn, 1, 1},     {"floor", kFloor, 1, 1},       {"int", kIntFn, 1, 1},
    {"is_pow2", kIsPow2, 1, 1},    {"log2", kLog2, 1, 1},         {"max", kMax, 2, -1},
    {"min", kMin, 2, -1},          {"round_up", kRoundUp, 2, 2},
};

// The function called `name`, or nullptr.
const FuncInfo* find_function(const std::string& name);

// The name of function `id` ("?" for an unknown id).
const char* function_name(std::uint8_t id);

}  // namespace ktune::expression_detail
