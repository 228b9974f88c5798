// Untuned starting configs per kind of GPU: what a family suggests for hardware ktune has not
// measured, carried by generated headers beside (and never mistaken for) tuned entries.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ktune {

// An untuned starting point for one kind of GPU that ktune has not measured (generated headers
// carry them, marked untuned, beside the tuned entries). `values` name the family's portable
// tile choices (the same names for every target), not a backend's search-space parameters.
struct ArchitectureDefault {
  std::string target;     // "ampere", "hopper", "rdna3", "apple", "fallback"
  std::string precision;  // "fp16", "fp32", ...
  std::vector<std::pair<std::string, std::int64_t>> values;
};

}  // namespace ktune
