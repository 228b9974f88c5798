#include "tuner/formats/python_json.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// Python's non-standard literals are swapped for strings JSON accepts, then swapped back for
// doubles after parsing. The marker strings start with a NUL, which no tool writes in a result.
struct PythonLiteral {
  std::string_view literal;
  std::string_view json_stand_in;
  std::string_view parsed_stand_in;
  double value;
};
const PythonLiteral kPythonLiterals[] = {
    {"-Infinity", R"("\u0000ktune:-Infinity")", std::string_view("\0ktune:-Infinity", 16), -HUGE_VAL},
    {"Infinity", R"("\u0000ktune:Infinity")", std::string_view("\0ktune:Infinity", 15), HUGE_VAL},
    {"NaN", R"("\u0000ktune:NaN")", std::string_view("\0ktune:NaN", 10), std::nan("")},
};

// One pass outside strings: refuses nesting beyond kMaxJsonNesting and rewrites Python's
// literals. Returns true (and fills `rewritten`) only when a literal was found.
bool check_nesting_and_rewrite_literals(std::string_view text, const std::string& where, std::string& rewritten) {
  bool in_string = false;
  std::size_t depth = 0;
  std::size_t copied = 0;
  bool found = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonNesting)
        throw InputError(where + ": nested more than " + std::to_string(kMaxJsonNesting) + " levels deep");
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == 'N' || c == 'I' || c == '-') {
      for (const PythonLiteral& literal : kPythonLiterals) {
        if (text.substr(i, literal.literal.size()) != literal.literal) continue;
        rewritten.append(text.substr(copied, i - copied));
        rewritten.append(literal.json_stand_in);
        i += literal.literal.size() - 1;
        copied = i + 1;
        found = true;
        break;
      }
    }
  }
  if (found) rewritten.append(text.substr(copied));
  return found;
}

// Depth is bounded by the check above, so recursion is safe here.
void restore_literals(nlohmann::ordered_json& value) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text.empty() || text[0] != '\0') return;
    for (const PythonLiteral& literal : kPythonLiterals)
      if (text == literal.parsed_stand_in) {
        value = literal.value;
        return;
      }
  } else if (value.is_structured()) {
    for (auto& element : value) restore_literals(element);
  }
}

void append_hex4(std::string& out, unsigned code) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xf];
}

// Decodes one UTF-8 sequence at `i`; returns the code point and advances `i`, or returns
// U+FFFD for a malformed byte (strings from the parser are valid; strings built in code may not be).
unsigned next_code_point(std::string_view text, std::size_t& i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
  if (length == 0 || i + length > text.size()) {
    ++i;
    return 0xfffd;
  }
  unsigned code = length == 1 ? lead : lead & (0x7f >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) {
      ++i;
      return 0xfffd;
    }
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  i += length;
  return code;
}

// json.dumps's default ensure_ascii=True: everything outside printable ASCII becomes \uXXXX.
void append_python_string(std::string& out, std::string_view text) {
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      default: break;
    }
    if (c >= ' ' && c <= '~') {
      out += c;
      ++i;
      continue;
    }
    const unsigned code = next_code_point(text, i);
    if (code > 0xffff) {
      const unsigned offset = code - 0x10000;
      append_hex4(out, 0xd800 + (offset >> 10));
      append_hex4(out, 0xdc00 + (offset & 0x3ff));
    } else {
      append_hex4(out, code);
    }
  }
  out += '"';
}

void append_newline_and_indent(std::string& out, std::string_view indent, std::size_t level) {
  out += '\n';
  for (std::size_t k = 0; k < level; ++k) out += indent;
}

void append_python_json(std::string& out, const nlohmann::ordered_json& value, std::optional<std::string_view> indent,
                        std::size_t level) {
  using Type = nlohmann::ordered_json::value_t;
  switch (value.type()) {
    case Type::null: out += "null"; return;
    case Type::boolean: out += value.get<bool>() ? "true" : "false"; return;
    case Type::number_integer: out += std::to_string(value.get<std::int64_t>()); return;
    case Type::number_unsigned: out += std::to_string(value.get<std::uint64_t>()); return;
    case Type::number_float: out += python_float_repr(value.get<double>()); return;
    case Type::string: append_python_string(out, value.get_ref<const std::string&>()); return;
    case Type::array:
    case Type::object: {
      const bool is_object = value.is_object();
      out += is_object ? '{' : '[';
      if (value.empty()) {
        out += is_object ? '}' : ']';
        return;
      }
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first) out += indent ? "," : ", ";
        first = false;
        if (indent) append_newline_and_indent(out, *indent, level + 1);
        if (is_object) {
          append_python_string(out, it.key());
          out += ": ";
        }
        append_python_json(out, *it, indent, level + 1);
      }
      if (indent) append_newline_and_indent(out, *indent, level);
      out += is_object ? '}' : ']';
      return;
    }
    case Type::binary:
    case Type::discarded: break;
  }
  throw std::logic_error("dump_python_json: binary or discarded JSON value");
}

}  // namespace

nlohmann::ordered_json parse_python_json(std::string_view text, const std::string& where) {
  std::string rewritten;
  const bool has_literals = check_nesting_and_rewrite_literals(text, where, rewritten);
  const std::string_view input = has_literals ? std::string_view(rewritten) : text;
  nlohmann::ordered_json value;
  try {
    value = nlohmann::ordered_json::parse(input.begin(), input.end());
  } catch (const nlohmann::ordered_json::exception& e) {
    // parse_error carries line and column; out_of_range reports numbers beyond a double.
    throw InputError(where + ": not valid JSON (" + e.what() + ")");
  }
  if (has_literals) restore_literals(value);
  return value;
}

std::string dump_python_json(const nlohmann::ordered_json& value, std::optional<std::string_view> indent) {
  std::string out;
  append_python_json(out, value, indent, 0);
  return out;
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";

  // Shortest round-trip digits, as Python's repr: "d.ddde±x" splits into digits and exponent.
  char buffer[40];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  if (error != std::errc()) throw std::logic_error("python_float_repr: to_chars failed");
  const std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
  const std::size_t e = text.find('e');
  std::string sign;
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c == '-') sign = "-";
    else if (c != '.') digits += c;
  }
  int exponent = 0;
  const std::string_view exponent_text = text.substr(e + 1);
  std::from_chars(exponent_text.data() + (exponent_text[0] == '+' ? 1 : 0), exponent_text.data() + exponent_text.size(),
                  exponent);
  const int point = exponent + 1;  // digits d1 d2 ... = 0.d1d2... x 10^point
  const int count = static_cast<int>(digits.size());

  std::string out = sign;
  if (point <= -4 || point > 16) {
    out += digits[0];
    if (count > 1) out += "." + digits.substr(1);
    const int magnitude = std::abs(exponent);
    out += exponent < 0 ? "e-" : "e+";
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
  } else if (point <= 0) {
    out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
  } else if (point >= count) {
    out += digits + std::string(static_cast<std::size_t>(point - count), '0') + ".0";
  } else {
    out += digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
  }
  return out;
}

}  // namespace ktune
