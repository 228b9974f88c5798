#include "tuner/core/expression/lexer.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "tuner/core/expression/messages.hpp"

namespace ktune::expression_detail {

namespace {

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  std::vector<Token> run() {
    tokenize();
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void error_at(std::size_t pos, const std::string& expected) const {
    throw_expected(where_, text_, pos, expected);
  }

  void tokenize() {
    std::size_t p = 0;
    const std::size_t n = text_.size();
    while (true) {
      while (p < n && std::isspace(static_cast<unsigned char>(text_[p]))) ++p;
      Token t;
      t.pos = p;
      if (p >= n) {
        tokens_.push_back(std::move(t));
        return;
      }
      const char c = text_[p];
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && p + 1 < n && std::isdigit(static_cast<unsigned char>(text_[p + 1])))) {
        p = lex_number(p, t);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t q = p;
        while (q < n && (std::isalnum(static_cast<unsigned char>(text_[q])) || text_[q] == '_')) ++q;
        t.type = Token::kName;
        t.s = std::string(text_.substr(p, q - p));
        p = q;
      } else if (c == '\'' || c == '"') {
        p = lex_string(p, t);
      } else {
        static constexpr const char* kTwoChar[] = {"**", "//", "==", "!=", "<=", ">=", "&&", "||"};
        t.type = Token::kOp;
        for (const char* op : kTwoChar) {
          if (text_.substr(p, 2) == op) {
            t.s = op;
            break;
          }
        }
        if (t.s.empty()) {
          if (std::strchr("+-*/%<>()[],!", c) != nullptr) {
            t.s = std::string(1, c);
          } else if (c == '&') {
            error_at(p, "'&&'");
          } else if (c == '|') {
            error_at(p, "'||'");
          } else if (c == '=') {
            error_at(p, "'=='");
          } else {
            error_at(p, std::string("an expression or operator, found '") + c + "'");
          }
        }
        p += t.s.size();
      }
      tokens_.push_back(std::move(t));
    }
  }

  std::size_t lex_number(std::size_t p, Token& t) {
    const std::size_t n = text_.size();
    const std::size_t start = p;
    auto is_ident = [&](std::size_t q) {
      return q < n && (std::isalnum(static_cast<unsigned char>(text_[q])) || text_[q] == '_');
    };
    if (text_[p] == '0' && p + 1 < n && std::strchr("xXoObB", text_[p + 1]) != nullptr) {
      const char kind = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[p + 1])));
      const int base = kind == 'x' ? 16 : kind == 'o' ? 8 : 2;
      std::size_t q = p + 2;
      while (is_ident(q)) ++q;
      std::uint64_t value = 0;
      const char* first = text_.data() + p + 2;
      const char* last = text_.data() + q;
      auto [ptr, ec] = std::from_chars(first, last, value, base);
      if (first == last || ptr != last) error_at(start, std::string("base-") + std::to_string(base) + " digits");
      if (ec == std::errc::result_out_of_range || value > static_cast<std::uint64_t>(INT64_MAX))
        error_at(start, "an integer literal that fits in 64 bits");
      t.type = Token::kInt;
      t.i = static_cast<std::int64_t>(value);
      return q;
    }
    std::size_t q = p;
    bool is_float = false;
    while (q < n && std::isdigit(static_cast<unsigned char>(text_[q]))) ++q;
    if (q < n && text_[q] == '.') {
      is_float = true;
      ++q;
      while (q < n && std::isdigit(static_cast<unsigned char>(text_[q]))) ++q;
    }
    if (q < n && (text_[q] == 'e' || text_[q] == 'E')) {
      std::size_t r = q + 1;
      if (r < n && (text_[r] == '+' || text_[r] == '-')) ++r;
      if (r < n && std::isdigit(static_cast<unsigned char>(text_[r]))) {
        is_float = true;
        q = r;
        while (q < n && std::isdigit(static_cast<unsigned char>(text_[q]))) ++q;
      } else {
        error_at(r, "exponent digits");
      }
    }
    if (is_ident(q)) error_at(q, "an operator after the number");
    const std::string_view digits = text_.substr(p, q - p);
    if (is_float) {
      double value = 0.0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ptr != digits.data() + digits.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
        error_at(start, "a number");
      if (ec == std::errc::result_out_of_range) {
        // from_chars leaves value untouched on range errors; Python gives inf or 0.0.
        value = std::strtod(std::string(digits).c_str(), nullptr);
      }
      t.type = Token::kFloat;
      t.d = value;
    } else {
      if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string_view::npos)
        error_at(start, "a decimal integer without leading zeros (use 0o for octal)");
      std::int64_t value = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec == std::errc::result_out_of_range) error_at(start, "an integer literal that fits in 64 bits");
      if (ptr != digits.data() + digits.size()) error_at(start, "a number");
      t.type = Token::kInt;
      t.i = value;
    }
    return q;
  }

  std::size_t lex_string(std::size_t p, Token& t) {
    const char quote = text_[p];
    std::size_t q = p + 1;
    std::string out;
    while (true) {
      if (q >= text_.size()) error_at(q, std::string("closing ") + quote + " of the string starting at column " +
                                             std::to_string(p + 1));
      const char c = text_[q];
      if (c == quote) break;
      if (c == '\\' && q + 1 < text_.size()) {
        const char e = text_[q + 1];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case '0': out += '\0'; break;
          case '\\':
          case '\'':
          case '"': out += e; break;
          default:  // Python keeps unknown escapes verbatim
            out += '\\';
            out += e;
        }
        q += 2;
        continue;
      }
      out += c;
      ++q;
    }
    t.type = Token::kString;
    t.s = std::move(out);
    return q + 1;
  }

  std::string_view text_;
  const std::string& where_;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view text, const std::string& where) { return Lexer(text, where).run(); }

}  // namespace ktune::expression_detail
