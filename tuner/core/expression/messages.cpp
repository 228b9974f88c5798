#include "tuner/core/expression/messages.hpp"

#include "tuner/core/errors.hpp"

namespace ktune::expression_detail {

std::string quote_text(std::string_view text) {
  std::string out = "\"";
  out += text;
  out += '"';
  return out;
}

void throw_expected(const std::string& where, std::string_view text, std::size_t pos, const std::string& expected) {
  throw InputError(where + ": expected " + expected + " at column " + std::to_string(pos + 1) + " in " +
                   quote_text(text));
}

}  // namespace ktune::expression_detail
