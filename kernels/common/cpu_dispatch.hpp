// Picks a compile-time instance of a CPU kernel from run-time parameter values, so tunable
// values such as vector width and unroll become template arguments (the CPU counterpart of
// NVRTC template arguments on the GPU backends).
//
//   auto fn = select_variant<RowFn>(kVectorWidths, kUnrolls, vector_width, unroll,
//                                   []<int W, int U>() { return &row_kernel<float, W, U>; });
//
// poly_choice reads the "libm" / "poly" parameters that pick such an instance too.
#pragma once

#include <string>
#include <variant>

#include "kernels/cpu_kernel.hpp"

namespace ktune::cpu {

template <int... Values>
struct IntChoices {};

// The instances every CPU family compiles; search spaces may only offer these values.
inline constexpr IntChoices<1, 4, 8, 16> kVectorWidths{};
inline constexpr IntChoices<1, 2, 4> kUnrolls{};

// "1/4/8/16": the values compiled, for error messages.
template <int... Values>
std::string choice_list(IntChoices<Values...>) {
  std::string out;
  ((out += (out.empty() ? "" : "/") + std::to_string(Values)), ...);
  return out;
}

// The instance for (first, second) of the two parameters named first_name and second_name;
// UnsupportedConfig, listing the compiled values, when there is none.
template <typename Result, int... Ws, int... Us, typename Make>
Result select_variant(IntChoices<Ws...> firsts, IntChoices<Us...> seconds, std::int64_t first, std::int64_t second,
                      Make make, const char* first_name = "vector_width", const char* second_name = "unroll") {
  Result result{};
  auto for_first = [&]<int W>() {
    ((W == first && Us == second ? static_cast<void>(result = make.template operator()<W, Us>())
                                 : static_cast<void>(0)),
     ...);
  };
  (for_first.template operator()<Ws>(), ...);
  if (!result)
    throw UnsupportedConfig("no compiled instance for " + std::string(first_name) + "=" + std::to_string(first) + " " +
                            second_name + "=" + std::to_string(second) + " (compiled: " + first_name + " " +
                            choice_list(firsts) + ", " + second_name + " " + choice_list(seconds) + ")");
  return result;
}

// The "libm" / "poly" choice of the config's string parameter `name`: true for "poly" (a
// vectorisable approximation), false for "libm" (a libm call per element); UnsupportedConfig
// for anything else.
inline bool poly_choice(const Config& config, const std::string& name) {
  const Value& value = config.at(name);
  const auto* choice = std::get_if<std::string>(&value);
  if (!choice || (*choice != "libm" && *choice != "poly"))
    throw UnsupportedConfig(name + " must be \"libm\" or \"poly\", got " + to_string(value));
  return *choice == "poly";
}

}  // namespace ktune::cpu
