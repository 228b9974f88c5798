// Numeric precision of a problem's inputs and outputs (accumulation is fp32 or wider).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ktune {

// fp32 .. fp64 are the precisions problems are tuned in; the integer types are only element
// storage, for the tensors of kernels that bring their own (a T1 spec's int32 vectors), and are
// never a problem's precision.
enum class Precision { fp32, fp16, bf16, tf32, fp8_e4m3, fp64, int8, uint8, int16, uint16, int32, uint32, int64, uint64 };

std::string_view to_string(Precision precision);
std::optional<Precision> parse_precision(std::string_view text);
// The precisions a problem may be tuned in (not the integer storage types).
std::vector<std::string> all_precision_names();
bool is_integer_storage(Precision precision);
// Bytes per element as stored in memory (tf32 is stored as fp32).
int element_bytes(Precision precision);
// Default relative-L2 tolerance per precision (shared/design.md correctness rules).
double default_tolerance(Precision precision);

}  // namespace ktune
