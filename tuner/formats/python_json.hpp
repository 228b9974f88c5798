// JSON as Python's json module reads and writes it. Kernel Tuner writes its cache and T4 files
// with json.dumps, so reading NaN/Infinity and writing the same text back needs Python's rules:
// the NaN, Infinity and -Infinity literals, repr() for floats, ", " and ": " separators, one
// element per line with indent, and non-ASCII characters escaped.
//
//   nlohmann::ordered_json j = parse_python_json(text, "cache.json");
//   std::string line = dump_python_json(j);        // json.dumps(j)
//   std::string pretty = dump_python_json(j, "");  // json.dumps(j, indent="")
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ktune {

// Result files nest four or five levels deep; the limit keeps hostile input (a million '[') from
// exhausting the stack of code that walks the parsed document.
inline constexpr std::size_t kMaxJsonNesting = 64;

// Parses `text`, keeping the members' order. Accepts Python's NaN, Infinity and -Infinity as
// doubles. Throws InputError "<where>: not valid JSON (...)" with the parser's line and column.
nlohmann::ordered_json parse_python_json(std::string_view text, const std::string& where);

// Writes `value` as json.dumps(value) does (no indent), or as json.dumps(value, indent=...) with
// `indent` repeated once per level ("" puts each element on its own line with no indentation).
std::string dump_python_json(const nlohmann::ordered_json& value, std::optional<std::string_view> indent = std::nullopt);

// Python's repr() of a float: the shortest text that reads back as the same double, "1.0" for
// whole numbers, exponent form below 1e-4 and from 1e16 ("1e-05", "1e+16"), "NaN", "Infinity".
std::string python_float_repr(double value);

}  // namespace ktune
