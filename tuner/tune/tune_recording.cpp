#include "tuner/tune/tune_recording.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "tuner/core/errors.hpp"
#include "tuner/core/output_file.hpp"
#include "tuner/formats/t4_results.hpp"

namespace ktune {

TuneRecording::TuneRecording(std::vector<Parameter> parameters, std::string kernel, std::string device,
                             const Problem& problem, std::uint64_t space_configs) {
  cache_.kernel_name = std::move(kernel);
  cache_.device_name = std::move(device);
  for (const auto& dim : problem.dims) cache_.problem_size.emplace_back(std::in_place_type<std::int64_t>, dim.second);
  for (Parameter& parameter : parameters) {
    cache_.tune_params_keys.push_back(parameter.name);
    cache_.tune_params.emplace_back(parameter.name, std::move(parameter.values));
  }
  cache_.objective = "time";
  cache_.other_header_members.emplace_back(std::string(kSpaceConfigsMember), space_configs);
}

void TuneRecording::add(const Config& config, const EvaluationResult& result) {
  KernelTunerRecord record;
  for (const std::string& name : cache_.tune_params_keys) record.config.push_back(config.at(name));
  record.key = kernel_tuner_key(record.config);
  const bool timed = result.outcome == Outcome::ok && result.stats.count > 0 && std::isfinite(result.stats.median_ns);
  if (timed) {
    record.time_ms = result.stats.median_ns * 1e-6;
    constexpr std::size_t kMaxTimes = 32;
    const std::size_t count = result.samples_ns.size();
    const std::size_t kept = std::min(count, kMaxTimes);
    std::vector<double> times;
    for (std::size_t k = 0; k < kept; ++k) times.push_back(result.samples_ns[k * count / kept] * 1e-6);
    record.times_ms = std::move(times);
  } else {
    record.failure = result.outcome == Outcome::compile_error ? KernelTunerFailure::compilation_failed
                                                              : KernelTunerFailure::runtime_failed;
  }
  record.other_members.emplace_back("compile_time", result.compile_ms);
  record.other_members.emplace_back("samples", result.samples_ns.size());
  record.other_members.emplace_back("verification_error", result.error);
  if (!timed) {
    record.other_members.emplace_back("ktune_outcome", std::string(to_string(result.outcome)));
    record.other_members.emplace_back("ktune_message", result.message);
  }
  record.other_members.emplace_back("timestamp", utc_now("%Y-%m-%d %H:%M:%S+00:00"));
  cache_.records.push_back(std::move(record));
}

std::vector<std::filesystem::path> save_recording(const TuneRecording& recording, const std::filesystem::path& dir,
                                                  const std::string& backend, const Problem& problem) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw InputError(dir.string() + ": cannot create the directory (" + error.message() + ")");
  std::string stem = recording.kernel_tuner_cache().kernel_name + "." + backend + ".";
  for (std::size_t d = 0; d < problem.dims.size(); ++d) {
    const std::string& name = problem.dims[d].first;
    // rows16384, but problem_size_0-100003: a name ending in a digit gets a separator.
    const bool digit = !name.empty() && std::isdigit(static_cast<unsigned char>(name.back()));
    stem += (d ? "_" : "") + name + (digit ? "-" : "") + std::to_string(problem.dims[d].second);
  }
  stem += "." + std::string(to_string(problem.precision));
  const std::filesystem::path cache_file = dir / (stem + ".json.gz");
  const std::filesystem::path t4_file = dir / (stem + "_T4.json.gz");
  save_kernel_tuner_cache(recording.kernel_tuner_cache(), cache_file);
  T4Results t4 = t4_from_kernel_tuner_cache(recording.kernel_tuner_cache());
  for (const auto& [name, value] : recording.kernel_tuner_cache().other_header_members)
    if (name == kSpaceConfigsMember) t4.metadata[name] = value;
  save_t4_results(t4, t4_file);
  return {cache_file, t4_file};
}

}  // namespace ktune
