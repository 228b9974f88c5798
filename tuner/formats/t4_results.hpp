// T4 results: the auto-tuning community's JSON format for tuning results (schema 1.0.0, Kernel
// Tuner's kernel_tuner/schema/T4/1.0.0/results-schema.json). Written and read here; a Kernel
// Tuner cache converts to it as Kernel Tuner's own converter does.
//
//   T4Results results = t4_from_kernel_tuner_cache(load_kernel_tuner_cache("conv.json.gz"));
//   save_t4_results(results, "conv_T4.json");      // gzip-compressed when the name ends in .gz
//   T4Results again = load_t4_results("conv_T4.json");
//
// Layout: {"metadata": {...}, "results": [...], "schema_version": "1.0.0"}; each result has
// "timestamp", "configuration" (parameter -> value), "times" (compilation, framework,
// search_algorithm, validation in ms, and "runtimes", every run's time), "invalidity" (correct,
// compile, runtime, timeout, correctness, constraints), "correctness" (1 or 0), "measurements"
// (name, value, unit) and "objectives" (measurement names).
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
#include "tuner/core/outcome.hpp"
#include "tuner/core/value.hpp"
#include "tuner/formats/gzip.hpp"
#include "tuner/formats/kernel_tuner_cache.hpp"

namespace ktune {

// Why a config has no valid result, or "correct" when it has one.
enum class T4Invalidity { correct, compile, runtime, timeout, correctness, constraints };

std::string_view to_string(T4Invalidity invalidity);
std::optional<T4Invalidity> parse_t4_invalidity(std::string_view name);
// How ktune's outcomes read in T4: a refused launch, a crashed worker or memory that could not
// be allocated failed at run time; an
// unsupported config breaks the backend's constraints.
T4Invalidity t4_invalidity(Outcome outcome);

struct T4Times {
  // compilation, framework, search_algorithm, validation, ... (ms) in file order; integers stay
  // integers so that a file reads back as the same text.
  std::vector<std::pair<std::string, Value>> durations;
  std::optional<std::vector<double>> runtimes;  // every run's time (ms); absent for failed configs

  std::optional<double> duration(std::string_view name) const;
  bool operator==(const T4Times& other) const = default;
};

struct T4Measurement {
  std::string name;              // "time", "GFLOP/s", ...
  nlohmann::ordered_json value;  // a number, a string (an error name) or a list
  std::string unit;              // "ms", "" ...; "" when the file has none
  std::vector<std::pair<std::string, nlohmann::ordered_json>> other_members;  // kept, written back
  bool operator==(const T4Measurement& other) const = default;
};

struct T4Result {
  std::optional<std::string> timestamp;
  Config configuration;  // in file order
  T4Times times;
  T4Invalidity invalidity = T4Invalidity::correct;
  Value correctness = std::int64_t{1};  // 1 correct, 0 not (a number; an integer in Kernel Tuner's files)
  std::vector<T4Measurement> measurements;
  std::vector<std::string> objectives;
  // Members this reader does not model, kept and written back after the others.
  std::vector<std::pair<std::string, nlohmann::ordered_json>> other_members;

  const T4Measurement* measurement(std::string_view name) const;  // nullptr when absent
  bool operator==(const T4Result& other) const = default;
};

struct T4Results {
  // {"timeunit": "miliseconds"} in the files Kernel Tuner converts (its spelling); null = none.
  nlohmann::ordered_json metadata;
  std::vector<T4Result> results;
  std::string schema_version = "1.0.0";  // "1.0.0" when the file has none
  std::vector<std::pair<std::string, nlohmann::ordered_json>> other_members;  // kept, written back

  bool operator==(const T4Results& other) const = default;
};

// Reads T4 results from bytes in memory (plain or gzip, by content); `where` names the source.
// Malformed input throws InputError naming `where`, the result's index and the member.
T4Results read_t4_results(std::string_view bytes, const std::string& where, std::size_t max_bytes = kMaxDecompressedBytes);
T4Results load_t4_results(const std::filesystem::path& file);

// The file's text as Kernel Tuner's converter writes it (json.dumps with indent=2).
std::string t4_results_text(const T4Results& results);
// Writes the text, gzip-compressed when the path ends in ".gz"; InputError when it cannot.
void save_t4_results(const T4Results& results, const std::filesystem::path& file);

// Kernel Tuner's conversion (kernel_tuner.cache.convert.convert_cache_to_t4): per record the
// timings, runtimes, one measurement (the objective, unit ""), invalidity from the objective's
// error, correctness 1 or 0, and the objective as the only objective.
T4Results t4_from_kernel_tuner_cache(const KernelTunerCache& cache);

}  // namespace ktune
