// The lookup code of every generated tuned/<family>.hpp header (`ktune export`, see
// db/export/header_exporter.cpp) beside the rule it applies (db/export/lookup_rule.hpp): the
// TunedEntry record, the resource check, the architecture-default lookup and
// lookup()/lookup_entry(), which answer by the rule's choose_entry().
//
// The exporter embeds this file's text and lookup_rule.hpp's at build time
// (cmake/embed_sources.cmake) and copies each section of both, byte for byte, into every header it
// writes, between the family's generated data. A section is the lines between
// "// BEGIN SECTION <name>" and "// END SECTION <name>"; everything outside the sections is left
// out. Editing a section changes every header exported afterwards.
//
// Outside the sections stands a small example family, shaped exactly like the exporter's output
// (Config, Shape, default_config, entries, architecture defaults and the per-family shape
// helpers), so that this file is ordinary C++: tests/unit/test_tuned_lookup.cpp compiles it
// with warnings as errors and checks the lookup against that family. The code in the sections
// may use only the standard headers included here, as a generated header does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "db/export/lookup_rule.hpp"

namespace ktune::tuned::example {

inline constexpr std::string_view family_name = "example";

// The rule's names, which a generated header has in its own namespace (the sections of
// lookup_rule.hpp copied there; its match_level section before default_config, as an enumerator
// declared after a namespace-scope variable of the same name trips -Wshadow).
using ktune::tuned::choose_entry;
using ktune::tuned::DeviceQuery;
using ktune::tuned::MatchLevel;
using ktune::tuned::to_string;
namespace detail {
using ktune::tuned::detail::extent_ratio;
}  // namespace detail

// ----- stand-in for generated data (not embedded) -----

// One configuration: a field per parameter of the search space, in its order.
struct Config {
  std::int64_t threads;
  std::int64_t vector_width;
};

// A problem shape: a field per dimension of the family, in its order.
struct Shape {
  std::int64_t rows;
  std::int64_t cols;
};

// BEGIN SECTION tuned_entry
// The best measured config of one backend, device, precision and shape, with provenance.
struct TunedEntry {
  std::string_view backend;        // "cpu", "cuda", "hip", "vulkan"
  std::string_view device;         // device name as the backend reports it
  std::string_view architecture;   // "sm_90", "gfx90a", "x86_64-avx2"
  std::string_view vendor;         // "nvidia", "amd", "intel"
  std::string_view precision;      // "fp32", "bf16", ...
  Shape shape;
  Config config;
  std::int64_t shared_bytes;       // shared memory per block its kernel needs (0: none)
  std::int64_t threads;            // threads per block of its kernel (0: not a GPU kernel)
  double median_ns;                // median time of this config on this shape
  std::string_view measured_at;    // ISO-8601 UTC
  std::string_view ktune_version;  // of the run that measured it
  std::string_view git_commit;     // of the ktune that measured it
  std::int64_t measurement_id;     // row of the measurement in the database
};

// END SECTION tuned_entry

// ----- stand-in for generated data (not embedded) -----

// The untuned default (the search space's "default"): the answer when no entry matches.
inline constexpr Config default_config{.threads = 1, .vector_width = 1};

// Tuned entries, sorted by backend, vendor, architecture, device, precision and shape.
inline constexpr std::array<TunedEntry, 5> entries{{
    // cpu | AMD EPYC 7B13 | rows=256 cols=1024 fp16
    {.backend = "cpu", .device = "AMD EPYC 7B13", .architecture = "x86_64-avx2", .vendor = "amd", .precision = "fp16",
     .shape = {.rows = 256, .cols = 1024},
     .config = {.threads = 1, .vector_width = 16},
     .shared_bytes = 0, .threads = 0,
     .median_ns = 800.0, .measured_at = "2026-01-01T00:00:23Z", .ktune_version = "0.1.0", .git_commit = "abc123def456", .measurement_id = 13},
    // cpu | AMD EPYC 7B13 | rows=256 cols=1024 fp32
    {.backend = "cpu", .device = "AMD EPYC 7B13", .architecture = "x86_64-avx2", .vendor = "amd", .precision = "fp32",
     .shape = {.rows = 256, .cols = 1024},
     .config = {.threads = 2, .vector_width = 8},
     .shared_bytes = 0, .threads = 0,
     .median_ns = 1234.5, .measured_at = "2026-01-01T00:00:21Z", .ktune_version = "0.1.0", .git_commit = "abc123def456", .measurement_id = 11},
    // cpu | AMD EPYC 7B13 | rows=4096 cols=4096 fp32
    {.backend = "cpu", .device = "AMD EPYC 7B13", .architecture = "x86_64-avx2", .vendor = "amd", .precision = "fp32",
     .shape = {.rows = 4096, .cols = 4096},
     .config = {.threads = 8, .vector_width = 8},
     .shared_bytes = 0, .threads = 0,
     .median_ns = 51234.25, .measured_at = "2026-01-01T00:00:22Z", .ktune_version = "0.1.0", .git_commit = "abc123def456", .measurement_id = 12},
    // cpu | AMD Ryzen 9 5950X | rows=1024 cols=1024 fp32
    {.backend = "cpu", .device = "AMD Ryzen 9 5950X", .architecture = "x86_64-avx2", .vendor = "amd", .precision = "fp32",
     .shape = {.rows = 1024, .cols = 1024},
     .config = {.threads = 16, .vector_width = 4},
     .shared_bytes = 0, .threads = 0,
     .median_ns = 900.5, .measured_at = "2026-01-01T00:00:32Z", .ktune_version = "0.1.0", .git_commit = "abc123def456", .measurement_id = 22},
    // cuda | NVIDIA H200 | rows=1024 cols=1024 fp32
    {.backend = "cuda", .device = "NVIDIA H200", .architecture = "sm_90", .vendor = "nvidia", .precision = "fp32",
     .shape = {.rows = 1024, .cols = 1024},
     .config = {.threads = 256, .vector_width = 4},
     .shared_bytes = 49152, .threads = 256,
     .median_ns = 3.5, .measured_at = "2026-01-01T00:00:41Z", .ktune_version = "0.1.0", .git_commit = "abc123def456", .measurement_id = 31},
}};

// BEGIN SECTION resources
// Per-block limits of the device a config is to run on.
struct DeviceLimits {
  std::int64_t max_shared_memory_per_block;  // bytes (opt-in maximum on CUDA)
  std::int64_t max_threads_per_block;
};

// Shared memory per block the kernel of a tuned entry needs (from the search space's launch
// expressions at the entry's shape).
constexpr std::int64_t required_shared_memory(const TunedEntry& entry) { return entry.shared_bytes; }

// True when the entry's kernel can launch within `limits`.
constexpr bool validate_config(const TunedEntry& entry, const DeviceLimits& limits) {
  return entry.shared_bytes <= limits.max_shared_memory_per_block && entry.threads <= limits.max_threads_per_block;
}

// END SECTION resources

// ----- stand-in for generated data (not embedded) -----

// Untuned starting points for kinds of GPU ktune has not measured, from the family's
// published practice. NOT measurements (tuned == false): tune on the device to replace them.
struct ArchitectureDefault {
  std::string_view target;     // "ampere", "hopper", "rdna3", "apple", "fallback"
  std::string_view precision;
  std::int64_t block;
  bool tuned;
};

inline constexpr std::array<ArchitectureDefault, 2> architecture_defaults{{
    {.target = "hopper", .precision = "fp16", .block = 128, .tuned = false},
    {.target = "fallback", .precision = "fp16", .block = 64, .tuned = false},
}};

// BEGIN SECTION architecture_default
// The starting point of `target`, else the "fallback" one (nullptr when there is neither).
constexpr const ArchitectureDefault* architecture_default(std::string_view target) {
  const ArchitectureDefault* fallback = nullptr;
  for (const auto& d : architecture_defaults) {
    if (d.target == target) return &d;
    if (d.target == "fallback") fallback = &d;
  }
  return fallback;
}

// END SECTION architecture_default

// BEGIN SECTION lookup_result
// What lookup_entry() answers: the config, the level of the fallback chain, and the entry.
struct LookupResult {
  Config config;
  MatchLevel level;
  const TunedEntry* entry;  // the entry that answered; nullptr for the default
};

// END SECTION lookup_result

// ----- stand-in for generated data (not embedded) -----

namespace detail {

constexpr bool same_shape(const Shape& a, const Shape& b) { return a.rows == b.rows && a.cols == b.cols; }

constexpr bool same_options(const Shape&, const Shape&) { return true; }

// 2^(sum over dims of |log2(query / tuned)|): ranks shapes like the sum of logs does, without
// std::log2 (not constexpr before C++26).
constexpr double shape_distance(const Shape& a, const Shape& b) {
  return 1.0
         * extent_ratio(a.rows, b.rows)
         * extent_ratio(a.cols, b.cols);
}

}  // namespace detail

// BEGIN SECTION lookup_functions
// The best tuned config for a device and shape, and which level of the fallback chain answered.
constexpr LookupResult lookup_entry(const DeviceQuery& query, const Shape& shape,
                                    std::string_view precision = "fp32") {
  const auto chosen = choose_entry(entries, query, shape, precision, detail::same_options, detail::same_shape,
                                   detail::shape_distance);
  if (chosen.entry == nullptr) return LookupResult{default_config, MatchLevel::default_config, nullptr};
  return LookupResult{chosen.entry->config, chosen.level, chosen.entry};
}

// The best tuned config for a device and shape (default_config when nothing matches).
constexpr Config lookup(const DeviceQuery& query, const Shape& shape,
                        std::string_view precision = "fp32") {
  return lookup_entry(query, shape, precision).config;
}

// END SECTION lookup_functions
}  // namespace ktune::tuned::example
