// libFuzzer target: the expression language (constraints, launch geometry, T1 Conditions).
// Input: expression text, then optionally a NUL byte and bytes that become the variables' values.
// Bad input must end in InputError (or the language's other KtuneErrors); anything else that
// escapes, and every sanitizer report, is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tuner/core/errors.hpp"
#include "tuner/core/expression.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string_view text = input.substr(0, split);
  const std::string_view value_bytes = split == std::string_view::npos ? std::string_view{} : input.substr(split + 1);
  try {
    ktune::Expression expression = ktune::Expression::parse(text, "fuzz");
    expression.bind(expression.variables());
    // Small integers, zero and negatives included, a float and a string among them.
    std::vector<ktune::Value> values;
    for (std::size_t i = 0; i < expression.variables().size(); ++i) {
      const int byte = i < value_bytes.size() ? static_cast<unsigned char>(value_bytes[i]) : 3;
      if (byte == 255) values.emplace_back(std::string("text"));
      else if (byte == 254) values.emplace_back(0.5);
      else values.emplace_back(static_cast<std::int64_t>(byte) - 8);
    }
    (void)expression.evaluate(values);
    (void)expression.evaluate_bool(values);
  } catch (const ktune::KtuneError&) {
    // bad input, reported as such
  }
  return 0;
}
