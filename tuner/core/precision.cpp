#include "tuner/core/precision.hpp"

#include <array>
#include <utility>

namespace ktune {
namespace {

struct PrecisionInfo {
  Precision precision;
  std::string_view name;
  int bytes;
  double tolerance;
};

constexpr std::array<PrecisionInfo, 14> kPrecisions{{
    {Precision::fp32, "fp32", 4, 1e-5},
    {Precision::fp16, "fp16", 2, 1e-3},
    {Precision::bf16, "bf16", 2, 1e-2},
    {Precision::tf32, "tf32", 4, 5e-4},
    {Precision::fp8_e4m3, "fp8_e4m3", 1, 6e-2},
    {Precision::fp64, "fp64", 8, 1e-12},
    // Storage only (is_integer_storage): exact.
    {Precision::int8, "int8", 1, 0},
    {Precision::uint8, "uint8", 1, 0},
    {Precision::int16, "int16", 2, 0},
    {Precision::uint16, "uint16", 2, 0},
    {Precision::int32, "int32", 4, 0},
    {Precision::uint32, "uint32", 4, 0},
    {Precision::int64, "int64", 8, 0},
    {Precision::uint64, "uint64", 8, 0},
}};

const PrecisionInfo& info(Precision precision) {
  for (const auto& entry : kPrecisions)
    if (entry.precision == precision) return entry;
  return kPrecisions[0];
}

}  // namespace

std::string_view to_string(Precision precision) { return info(precision).name; }

bool is_integer_storage(Precision precision) { return precision >= Precision::int8; }

std::optional<Precision> parse_precision(std::string_view text) {
  for (const auto& entry : kPrecisions)
    if (entry.name == text && !is_integer_storage(entry.precision)) return entry.precision;
  return std::nullopt;
}

std::vector<std::string> all_precision_names() {
  std::vector<std::string> names;
  for (const auto& entry : kPrecisions)
    if (!is_integer_storage(entry.precision)) names.emplace_back(entry.name);
  return names;
}

int element_bytes(Precision precision) { return info(precision).bytes; }
double default_tolerance(Precision precision) { return info(precision).tolerance; }

}  // namespace ktune
