// Numeric precision of a problem's inputs and outputs (accumulation is fp32 or wider).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ktune {

enum class Precision { fp32, fp16, bf16, tf32, fp8_e4m3, fp64 };

std::string_view to_string(Precision precision);
std::optional<Precision> parse_precision(std::string_view text);
std::vector<std::string> all_precision_names();
// Bytes per element as stored in memory (tf32 is stored as fp32).
int element_bytes(Precision precision);
// Default relative-L2 tolerance per precision (shared/design.md correctness rules).
double default_tolerance(Precision precision);

}  // namespace ktune
