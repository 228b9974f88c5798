// Kernel Tuner cache files: read (plain JSON or gzip, by content) and write (gzip when the path
// ends in .gz), in the layout Kernel Tuner itself writes and reads back.
//
//   KernelTunerCache cache = load_kernel_tuner_cache("convolution_A100.json.gz");
//   for (const KernelTunerRecord& record : cache.records)
//     if (record.time_ms) use(cache.config(record), *record.time_ms);
//   if (cache.recovery) std::cout << cache.recovery->records_recovered << " records recovered\n";
//   save_kernel_tuner_cache(cache, "copy.json");
//
// The layout: a header (device_name, kernel_name, problem_size, tune_params_keys, tune_params,
// objective) and "cache", which maps "v1,v2,..." (the values in tune_params_keys order, as
// Python's str() writes them) to a record: every parameter, "time" (ms, the mean of "times") or
// an error name in its place, "times", compile_time and the other timings, metrics such as
// "GFLOP/s", and "timestamp". Kernel Tuner writes the header with json.dumps(indent="") minus
// the closing "}\n}", appends one `\n"key": {...},` line per record as it measures, and closes
// the file with "}\n}" at the end of the run, so an interrupted run leaves an unterminated file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/config.hpp"
#include "tuner/core/value.hpp"
#include "tuner/formats/gzip.hpp"

namespace ktune {

// The errors Kernel Tuner stores in place of a measured value, by the names it writes.
enum class KernelTunerFailure {
  invalid_config,      // "InvalidConfig": fails a restriction or cannot be instantiated
  compilation_failed,  // "CompilationFailedConfig"
  runtime_failed,      // "RuntimeFailedConfig": launch or run failed (resources, too many threads)
};
inline constexpr KernelTunerFailure kAllKernelTunerFailures[] = {
    KernelTunerFailure::invalid_config, KernelTunerFailure::compilation_failed, KernelTunerFailure::runtime_failed};

// The header member (and, in T4 results, the metadata member) in which a space ktune recorded
// says how many valid configs the whole space has for the recorded problem and device, so that
// a replay can tell a recording of the whole space from one of a part of it. Kernel Tuner
// ignores header members it does not know; its own caches lack this one.
inline constexpr std::string_view kSpaceConfigsMember = "ktune_space_configs";

std::string_view to_string(KernelTunerFailure failure);
std::optional<KernelTunerFailure> parse_kernel_tuner_failure(std::string_view name);

// One measured (or failed) config.
struct KernelTunerRecord {
  std::string key;                        // "16,1,1,1,0,0,0,1,15,15", as in the file
  std::vector<Value> config;              // one value per tune_params_keys entry, in that order
  std::optional<double> time_ms;          // "time" when it is a number
  std::optional<KernelTunerFailure> failure;  // the error Kernel Tuner stored instead of a value
  // Where the failure is written: "time" (Kernel Tuner's usual place), or the name of the member
  // of other_members that holds it (an objective other than time, or "__error__").
  std::string failure_member = "time";
  std::optional<std::vector<double>> times_ms;  // "times": every run's time; absent for failures
  // Every other member in file order, as parsed: compile_time, verification_time, benchmark_time,
  // strategy_time, framework_time (ms), metrics such as "GFLOP/s", "timestamp", observers' lists.
  std::vector<std::pair<std::string, nlohmann::ordered_json>> other_members;

  // The named member of other_members when it is a number ("compile_time", "GFLOP/s", ...).
  std::optional<double> number(std::string_view name) const;
  // The named member of other_members; nullptr when absent.
  const nlohmann::ordered_json* member(std::string_view name) const;

  bool operator==(const KernelTunerRecord& other) const = default;
};

// Set when the file was not closed (an interrupted run): what could be read.
struct InterruptedRunRecovery {
  std::size_t records_recovered = 0;
  std::size_t bytes_dropped = 0;  // the cut-off last line; 0 when the run stopped between records

  bool operator==(const InterruptedRunRecovery& other) const = default;
};

struct KernelTunerCache {
  std::string device_name;
  std::string kernel_name;
  // A single number in the file becomes a one-element list; empty when the file has none (and
  // then not written).
  std::vector<Value> problem_size;
  std::vector<std::string> tune_params_keys;
  std::vector<std::pair<std::string, std::vector<Value>>> tune_params;  // in file order
  std::string objective = "time";   // "time" when the file has none (older Kernel Tuner versions)
  // Header members this reader does not model (e.g. "schema_version"), kept and written back.
  std::vector<std::pair<std::string, nlohmann::ordered_json>> other_header_members;
  std::vector<KernelTunerRecord> records;  // file order
  std::optional<InterruptedRunRecovery> recovery;

  // The record with this key; nullptr when there is none. A linear search.
  const KernelTunerRecord* find(std::string_view key) const;
  // The record's values named by tune_params_keys.
  Config config(const KernelTunerRecord& record) const;

  bool operator==(const KernelTunerCache& other) const = default;
};

// Reads a cache from bytes in memory (plain or gzip, recognised by content); `where` names the
// source in messages. Malformed input throws InputError naming `where` and, where known, the
// line, record key and member; an unterminated file yields the complete records and `recovery`.
// The decompressed (or plain) text may not exceed `max_bytes` (see kMaxDecompressedBytes).
KernelTunerCache read_kernel_tuner_cache(std::string_view bytes, const std::string& where,
                                         std::size_t max_bytes = kMaxDecompressedBytes);
KernelTunerCache load_kernel_tuner_cache(const std::filesystem::path& file);

// "v1,v2,..." as Kernel Tuner builds record keys: Python's str() of each value, joined by ",".
std::string kernel_tuner_key(const std::vector<Value>& config);

// The file's text, closed, as Kernel Tuner writes it. For a closed file Kernel Tuner wrote this
// is the same bytes (checked on the shared caches), except that booleans read as 0/1 and a
// single-number problem_size becomes a list. Records are written under their `key`.
std::string kernel_tuner_cache_text(const KernelTunerCache& cache);
// Writes the text, gzip-compressed when the path ends in ".gz"; InputError when it cannot.
void save_kernel_tuner_cache(const KernelTunerCache& cache, const std::filesystem::path& file);

}  // namespace ktune
