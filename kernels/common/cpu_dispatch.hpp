// Picks a compile-time instance of a CPU kernel from run-time parameter values, so tunable
// values such as vector width and unroll become template arguments (the CPU counterpart of
// NVRTC template arguments on the GPU backends).
//
//   auto fn = select_variant<RowFn>(kVectorWidths, kUnrolls, vector_width, unroll,
//                                   []<int W, int U>() { return &row_kernel<float, W, U>; });
#pragma once

#include <string>

#include "tuner/backends/cpu/cpu_kernel.hpp"

namespace ktune::cpu {

template <int... Values>
struct IntChoices {};

// The instances every CPU family compiles; search spaces may only offer these values.
inline constexpr IntChoices<1, 4, 8, 16> kVectorWidths{};
inline constexpr IntChoices<1, 2, 4> kUnrolls{};

template <typename Result, int... Ws, int... Us, typename Make>
Result select_variant(IntChoices<Ws...>, IntChoices<Us...>, std::int64_t vector_width, std::int64_t unroll,
                      Make make) {
  Result result{};
  auto for_width = [&]<int W>() {
    ((W == vector_width && Us == unroll ? static_cast<void>(result = make.template operator()<W, Us>())
                                        : static_cast<void>(0)),
     ...);
  };
  (for_width.template operator()<Ws>(), ...);
  if (!result)
    throw UnsupportedConfig("no compiled instance for vector_width=" + std::to_string(vector_width) +
                            " unroll=" + std::to_string(unroll) +
                            " (compiled: vector_width 1/4/8/16, unroll 1/2/4)");
  return result;
}

}  // namespace ktune::cpu
