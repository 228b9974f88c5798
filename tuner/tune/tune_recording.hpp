// A tune's visited configs as files other tuners read: a Kernel Tuner cache (which Kernel
// Tuner, its simulation mode and `ktune replay` replay) and T4 results (the auto-tuning
// community's results format). A brute-force tune recorded this way is a fully measured space.
//
//   TuneRecording recording(valid.parameters(), "rmsnorm", device_name, problem, valid.size());
//   recording.add(config, result);             // for every visited config, reused ones too
//   save_recording(recording, "spaces", "cuda", problem);   // the cache and the T4 results
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/problem.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/formats/kernel_tuner_cache.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

class TuneRecording {
 public:
  // `space_configs`: the valid configs of the tuned space for this problem and device, written
  // as kSpaceConfigsMember so that a replay knows what part of the space was visited.
  TuneRecording(std::vector<Parameter> parameters, std::string kernel, std::string device, const Problem& problem,
                std::uint64_t space_configs);

  void add(const Config& config, const EvaluationResult& result);
  std::size_t size() const { return cache_.records.size(); }

  // "time" is the median of the timed samples in ms (the objective ktune tunes for; Kernel Tuner
  // writes the mean). "times" holds at most 32 of the samples, evenly spaced over the run (a
  // GPU config yields hundreds, which would make a recorded space of thousands of configs tens
  // of megabytes); "samples" gives their full count. A config that did not produce a
  // correct, timed result is CompilationFailedConfig when it did not compile and
  // RuntimeFailedConfig otherwise, with ktune's outcome and message kept beside it.
  const KernelTunerCache& kernel_tuner_cache() const { return cache_; }

 private:
  KernelTunerCache cache_;
};

// Writes <dir>/<kernel>.<backend>.<dims>.<precision>.json.gz (the Kernel Tuner cache) and
// ..._T4.json.gz beside it, creating `dir`; returns both paths. InputError when it cannot.
std::vector<std::filesystem::path> save_recording(const TuneRecording& recording, const std::filesystem::path& dir,
                                                  const std::string& backend, const Problem& problem);

}  // namespace ktune
