// Pieces of the expression language's error messages shared by the lexer, parser, interpreter
// and bind().
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ktune::expression_detail {

// The expression's text in double quotes, as messages show it.
std::string quote_text(std::string_view text);

// Throws InputError "<where>: expected <expected> at column <pos + 1> in "<text>"".
[[noreturn]] void throw_expected(const std::string& where, std::string_view text, std::size_t pos,
                                 const std::string& expected);

}  // namespace ktune::expression_detail
