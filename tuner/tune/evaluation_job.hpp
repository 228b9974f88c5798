// What the tune loop hands to a device and what comes back. These travel between threads of
// one host and, as JSON, between MPI ranks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tuner/backends/backend.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/problem.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

// One problem of one family on one backend, measured the same way on every device.
// Seconds a worker may take to prepare a problem unless told otherwise: the largest problems a
// device holds take minutes of single-threaded float64 reference on the host.
inline constexpr double kDefaultSetupTimeoutSeconds = 600;

struct EvaluationTask {
  std::string backend;
  Problem problem;
  MeasureSettings settings;
  double config_timeout_s = 60.0;
  // Preparing the problem in a worker (inputs and the float64 reference) before its first config.
  double setup_timeout_s = kDefaultSetupTimeoutSeconds;

  nlohmann::json to_json() const;
  static EvaluationTask from_json(const nlohmann::json& json);  // the family must be registered
};

struct EvaluationJob {
  std::uint64_t id = 0;    // unique within a tune, so a result finds its job again
  std::size_t index = 0;   // into the tune's valid configs
  Config config;
  std::map<std::string, std::int64_t> launch;  // the geometry the space derives for the config
  // The best median of the tune when the job was handed out (0: none yet, or racing off): the
  // device stops timing a config clearly slower (StoppingCriteria::race_ns).
  double race_ns = 0;

  nlohmann::json to_json() const;
  static EvaluationJob from_json(const nlohmann::json& json);
};

// A harness failure (not the config's): the device could not prepare the problem, say. The tune
// stops with it, as it would on one device.
struct HarnessFailure {
  int exit_code = 1;
  std::string message;
};

struct FinishedEvaluation {
  EvaluationJob job;
  EvaluationResult result;
  double evaluation_seconds = 0;  // building (waiting for the compiler) and evaluating
  double prepare_seconds = 0;     // inputs and reference in a fresh worker: set-up, not evaluation
  std::string device;             // which device measured it, e.g. "cuda:1" or "rank 2 cuda:0"
  std::optional<HarnessFailure> failure;
  // Cut short by a stop (abandon_workers()): says nothing of the config; dropped, not recorded.
  bool abandoned = false;

  nlohmann::json to_json() const;
  static FinishedEvaluation from_json(const nlohmann::json& json);
};

}  // namespace ktune
