// The result of evaluating one config on one device: outcome, verification error and timings.
// This is what the worker sends back and what the store records.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/outcome.hpp"
#include "tuner/measure/statistics.hpp"

namespace ktune {

// How long the device worked on one config, for the tune's GPU-busy share: the variant's own
// launches (every timed sample, the verification run and the warm-up runs, the last two counted at
// the samples' median) and what ran between the timed samples (cache evictions and the restores
// of read-write tensors), counted apart.
struct DeviceTime {
  double kernel_ns = 0;
  double between_ns = 0;
};

struct EvaluationResult {
  Outcome outcome = Outcome::ok;
  std::string message;               // why it failed, or notes (e.g. "time cap reached")
  std::vector<double> samples_ns;    // every timed sample, in order
  SampleStatistics stats;            // summary of samples_ns
  double error = -1;                 // relative L2 error vs the reference; -1 when not verified,
                                     // NaN when the output held NaN or infinity (null in JSON)
  double compile_ms = 0;             // time to build the variant (0 when prebuilt)
  nlohmann::json environment = nlohmann::json::object();  // clocks, throttling, ...
  DeviceTime device_time;

  nlohmann::json to_json() const;
  static EvaluationResult from_json(const nlohmann::json& json);
};

}  // namespace ktune
