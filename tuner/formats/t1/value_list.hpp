// The Python list expressions that T1 specs (Kernel Tuner, KTT, BAT) write as parameter Values:
//
//   [1, 2, 4]                          list literals; elements are expressions (2**5, 3*32)
//   range(8)  range(1, 33)  range(64, 0, -8)
//   list(range(1, 11))                 list() of anything below
//   [2**i for i in range(0, 6)]        comprehensions, with an optional `if` filter:
//   [32*i for i in range(1, 33) if i % 2 == 0]
//   [1, 2] + list(range(4, 9, 4))      concatenation
//   (1, 2, 4)                          tuples read as lists
//
// Element expressions use the constraint expression language (expression.hpp), so they read
// the comprehension's variable and nothing else.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tuner/core/value.hpp"

namespace ktune {

// The values, in order. InputError naming `where`, the text and what is wrong.
std::vector<Value> evaluate_value_list(std::string_view text, const std::string& where);

}  // namespace ktune
