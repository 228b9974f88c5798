#include "tuner/formats/t1/value_list.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

#include "tuner/core/errors.hpp"
#include "tuner/core/expression.hpp"

namespace ktune {
namespace {

// A list too long to be a parameter's values is a mistake (range(10**9)), not a space to build.
constexpr std::size_t kMaxValues = 1u << 20;

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class ListEvaluator {
 public:
  ListEvaluator(std::string_view whole, std::string where) : whole_(whole), where_(std::move(where)) {}

  std::vector<Value> list(std::string_view text) {
    text = trim(text);
    if (text.empty()) fail("expected a list");
    // Concatenation: split at top-level '+'.
    const auto parts = split_top_level(text, "+");
    if (parts.size() > 1) {
      std::vector<Value> joined;
      for (const auto part : parts) {
        auto values = list(part);
        joined.insert(joined.end(), values.begin(), values.end());
        check_size(joined.size());
      }
      return joined;
    }
    if (const auto inner = call_argument(text, "list")) return list(*inner);
    if (const auto inner = call_argument(text, "tuple")) return list(*inner);
    if (const auto inner = call_argument(text, "range")) return range(*inner);
    if (enclosed(text, '[', ']') || enclosed(text, '(', ')')) {
      const std::string_view inner = trim(text.substr(1, text.size() - 2));
      if (inner.empty()) return {};
      if (const auto for_at = find_keyword(inner, "for")) return comprehension(inner, *for_at);
      if (text.front() == '(' && split_top_level(inner, ",").size() == 1) return list(inner);  // (list)
      std::vector<Value> values;
      for (const auto element : split_top_level(inner, ",")) {
        if (trim(element).empty()) continue;  // a trailing comma
        values.push_back(scalar(element, {}, {}));
      }
      return values;
    }
    fail("'" + std::string(text) + "' is not a list, range(...), list(...) or comprehension");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(where_ + ": Values \"" + std::string(whole_) + "\": " + what);
  }

  void check_size(std::size_t size) const {
    if (size > kMaxValues) fail("more than " + std::to_string(kMaxValues) + " values");
  }

  // For each position of `text`: whether it lies outside every bracket and quote, counting a
  // closing bracket as outside (its depth after it). Everything after an unterminated quote is
  // inside.
  static std::vector<bool> top_level(std::string_view text) {
    std::vector<bool> outside(text.size(), false);
    int depth = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '\'' || c == '"') {
        i = text.find(c, i + 1);
        if (i == std::string_view::npos) break;
        continue;
      }
      if (c == '[' || c == '(' || c == '{') ++depth;
      if (c == ']' || c == ')' || c == '}') --depth;
      outside[i] = depth == 0;
    }
    return outside;
  }

  // True when `text` is one bracketed group: it opens with `open` and that closes only at the end.
  static bool enclosed(std::string_view text, char open, char close) {
    if (text.size() < 2 || text.front() != open || text.back() != close) return false;
    const std::vector<bool> outside = top_level(text);
    return outside.back() && std::find(outside.begin(), outside.end() - 1, true) == outside.end() - 1;
  }

  // The argument text of `name(...)` when `text` is exactly that call.
  static std::optional<std::string_view> call_argument(std::string_view text, std::string_view name) {
    if (text.substr(0, name.size()) != name) return std::nullopt;
    const std::string_view rest = trim(text.substr(name.size()));
    if (!enclosed(rest, '(', ')')) return std::nullopt;
    return rest.substr(1, rest.size() - 2);
  }

  // Pieces of `text` between top-level occurrences of `separator` (outside brackets and quotes).
  // A '+' that follows an operator or an opening is a unary plus, not a separator.
  static std::vector<std::string_view> split_top_level(std::string_view text, std::string_view separator) {
    std::vector<std::string_view> parts;
    const std::vector<bool> outside = top_level(text);
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (!outside[i] || text.substr(i, separator.size()) != separator) continue;
      if (separator == "+") {
        const std::string_view before = trim(text.substr(start, i - start));
        if (before.empty() || std::string_view("+-*/%(,[<>=").find(before.back()) != std::string_view::npos) continue;
        if (i + 1 < text.size() && text[i + 1] == '+') continue;
        // `1e+3`: an exponent sign, not a concatenation.
        if (before.size() >= 2 && (before.back() == 'e' || before.back() == 'E') &&
            std::isdigit(static_cast<unsigned char>(before[before.size() - 2])))
          continue;
      }
      parts.push_back(text.substr(start, i - start));
      start = i + separator.size();
    }
    parts.push_back(text.substr(start));
    return parts;
  }

  // Position of a top-level keyword (a whole word) in `text`.
  static std::optional<std::size_t> find_keyword(std::string_view text, std::string_view keyword) {
    const std::vector<bool> outside = top_level(text);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (outside[i] && text.substr(i, keyword.size()) == keyword && (i == 0 || !is_name_char(text[i - 1])) &&
          (i + keyword.size() == text.size() || !is_name_char(text[i + keyword.size()])))
        return i;
    return std::nullopt;
  }

  Value scalar(std::string_view text, const std::string& variable, const Value& binding) {
    Expression expression = Expression::parse(trim(text), where_ + ": Values \"" + std::string(whole_) + "\"");
    std::vector<std::string> slots;
    std::vector<Value> values;
    if (!variable.empty()) {
      slots.push_back(variable);
      values.push_back(binding);
    }
    expression.bind(slots);
    return expression.evaluate(values);
  }

  std::int64_t integer(std::string_view text) {
    const Value value = scalar(text, {}, {});
    const auto* whole = std::get_if<std::int64_t>(&value);
    if (whole == nullptr) fail("range() takes whole numbers, got " + to_string(value));
    return *whole;
  }

  std::vector<Value> range(std::string_view arguments) {
    const auto parts = split_top_level(arguments, ",");
    if (parts.empty() || parts.size() > 3) fail("range() takes 1 to 3 arguments");
    std::int64_t start = 0, stop = 0, step = 1;
    if (parts.size() == 1) {
      stop = integer(parts[0]);
    } else {
      start = integer(parts[0]);
      stop = integer(parts[1]);
      if (parts.size() == 3) step = integer(parts[2]);
    }
    if (step == 0) fail("range() step must not be zero");
    std::vector<Value> values;
    for (std::int64_t v = start; step > 0 ? v < stop : v > stop;) {
      values.push_back(Value{v});
      check_size(values.size());
      // The next value, unless it would pass the stop (or overflow on the way there).
      if (step > 0 ? v > stop - step : v < stop - step) break;
      v += step;
    }
    return values;
  }

  // "body for name in iterable [if condition]"
  std::vector<Value> comprehension(std::string_view inner, std::size_t for_at) {
    const std::string_view body = trim(inner.substr(0, for_at));
    const std::string_view after_for = inner.substr(for_at + 3);
    const auto in_at = find_keyword(after_for, "in");
    if (!in_at) fail("a comprehension needs 'for NAME in ...'");
    const std::string variable(trim(after_for.substr(0, *in_at)));
    if (variable.empty() || !std::all_of(variable.begin(), variable.end(), is_name_char) ||
        std::isdigit(static_cast<unsigned char>(variable[0])))
      fail("'" + variable + "' is not a name a comprehension can bind (one name only)");
    std::string_view iterable = after_for.substr(*in_at + 2);
    std::optional<std::string_view> condition;
    if (const auto if_at = find_keyword(iterable, "if")) {
      condition = iterable.substr(*if_at + 2);
      iterable = iterable.substr(0, *if_at);
    }
    if (find_keyword(iterable, "for")) fail("nested comprehensions are not supported");
    const std::string context = where_ + ": Values \"" + std::string(whole_) + "\"";
    Expression element = Expression::parse(body, context);
    element.bind({variable});
    std::optional<Expression> filter;
    if (condition) {
      filter = Expression::parse(trim(*condition), context);
      filter->bind({variable});
    }
    std::vector<Value> values;
    for (const Value& item : list(iterable)) {
      const std::vector<Value> slot{item};
      if (filter && !filter->evaluate_bool(slot)) continue;
      values.push_back(element.evaluate(slot));
      check_size(values.size());
    }
    return values;
  }

  std::string_view whole_;
  std::string where_;
};

}  // namespace

std::vector<Value> evaluate_value_list(std::string_view text, const std::string& where) {
  ListEvaluator evaluator(text, where);
  return evaluator.list(text);
}

}  // namespace ktune
