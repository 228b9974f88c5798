// The expression lexer: splits the text into numbers, strings, names and operators.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::expression_detail {

struct Token {
  enum Type { kEnd, kInt, kFloat, kString, kName, kOp };
  Type type = kEnd;
  std::size_t pos = 0;  // 0-based offset in the text
  std::int64_t i = 0;
  double d = 0.0;
  std::string s;  // operator, name or string literal contents
};

// The tokens of `text`, ending with one kEnd token. Throws InputError naming `where`, the column
// and what was expected.
std::vector<Token> tokenize(std::string_view text, const std::string& where);

}  // namespace ktune::expression_detail
