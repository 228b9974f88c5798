// One tune: a family on a backend for one problem. Builds the constrained space, lets the
// strategy propose configs, reuses what the database already holds for this device, kernel
// source, problem and config, evaluates the rest on every device given (a worker per device,
// and the other ranks' devices in an MPI job), and records every result in its own transaction.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/backends/backend.hpp"
#include "tuner/backends/variant_builder.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/device.hpp"
#include "tuner/core/problem.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/measure/device_use.hpp"
#include "tuner/strategies/replay.hpp"
#include "tuner/tune/tune_devices.hpp"

namespace ktune {

struct TuneRequest {
  std::string family;
  std::string backend = "cpu";
  std::map<std::string, std::int64_t> shape;  // overrides of the family's default dims
  Precision precision = Precision::fp32;
  std::string strategy = "random";
  std::optional<std::size_t> budget;          // configs visited (evaluated + reused)
  std::optional<double> time_limit_s;         // seconds spent evaluating configs; reused results
                                              // count with the time they took when measured
  std::uint64_t seed = 1;
  std::filesystem::path db = "ktune.db";
  std::optional<std::filesystem::path> space_file;  // default: search_spaces/<family>.<backend>.json
  // A T1 spec whose kernel is the family (registered with register_t1_kernel); its space comes
  // from the spec.
  std::optional<std::filesystem::path> t1_spec;
  MeasureSettings measure;
  // Stop timing a config once its median is clearly above the best so far (StoppingCriteria::
  // race_ns); `--no-race` times every config to its stopping rule.
  bool race = true;
  // Measure every config again, stored results notwithstanding (`--remeasure`).
  bool remeasure = false;
  // `--max-noise` was given: a config whose samples never settled under it is `noisy`, not ranked,
  // and a stored result that did not settle under it is measured again.
  bool strict_noise = false;
  // Above this relative standard deviation a result is flagged noisy (on the line, in the JSON).
  double noisy_above = 0.10;
  double config_timeout_s = 60.0;             // per config, verification and timing included
  // A worker preparing the problem (inputs, float64 reference); unset: setup_timeout_for().
  std::optional<double> setup_timeout_s;
  // When set, every visited config (reused ones too) is also written there as a Kernel Tuner
  // cache and as T4 results, named after the kernel, backend and problem (tune_recording.hpp).
  std::optional<std::filesystem::path> record_dir;
  std::vector<std::string> argv;
  // Offer the strategy the best configs of the same kernel measured for other problems or
  // devices in the database (tune_prior.hpp); `--no-prior` turns it off.
  bool use_prior = true;
  // Recorded spaces given with `--prior FILE` (Kernel Tuner caches or T4 results, from ktune or
  // another tuner): their fastest configs come before the database's.
  std::vector<PriorSpace> prior_spaces;
};

struct ConfigTiming {
  Config config;
  SampleStatistics stats;
  double error = -1;
};

struct TuneSummary {
  std::string family;
  std::string backend;
  DeviceInfo device;
  Problem problem;
  std::uint64_t space_total = 0;
  std::size_t space_valid = 0;
  double space_seconds = 0;
  std::size_t evaluated = 0;  // measured in this run
  std::size_t reused = 0;     // found in the database
  std::map<std::string, std::size_t> outcomes;
  std::optional<ConfigTiming> best;
  std::optional<ConfigTiming> default_config;  // the family's untuned default, when valid and ok
  double bytes = 0;
  double flops = 0;
  double seconds = 0;
  // How busy the tune kept its devices over `seconds`: shares of each device's time (the device
  // time of the configs measured in this run, divided by the number of devices that measured
  // them) and distinct configs measured per minute over all devices (device_use.hpp). Reused
  // results took no device time here and do not count.
  DeviceUse device_use;
  std::string stop_reason;  // "space exhausted", "budget of 20 configs reached", ...
  bool interrupted = false;
  // Configs in flight at the stop that did not finish within its grace period: not recorded.
  std::size_t dropped_at_stop = 0;
  std::int64_t run_id = 0;
  std::filesystem::path space_file;
  std::vector<std::filesystem::path> recorded_files;  // with TuneRequest::record_dir
  std::vector<std::string> devices;  // the devices that measured, e.g. cuda:0 cuda:1, "rank 1 (2 devices)"
  std::vector<std::string> lost;     // MPI ranks lost during the tune
  std::size_t prior_configs = 0;     // prior configs offered to the strategy (tune_prior.hpp)
  std::size_t prior_configs_valid = 0;  // of those, the ones valid in this space
  // Where the prior configs came from, in the order offered (the family's default left out:
  // it is measured first anyway).
  std::size_t prior_from_files = 0;       // --prior
  std::size_t prior_from_database = 0;    // earlier tunes (tune_prior.hpp)
  std::size_t prior_starting_points = 0;  // the space's starting points
  std::string strategy;  // the one that ran ("auto" resolved: resolve_strategy)
  std::string verification;               // what outputs were checked against (KernelFamily::verification)
  std::optional<Config> reference_config;  // the config whose output became the reference, when one did
  // How the launch was derived (KernelFamily::launch_rule; empty for the space's own expressions)
  // and the launch of the default config: {"config", "launch"}.
  std::string launch_rule;
  nlohmann::json default_launch = nlohmann::json::object();
  // Results faster than the device's memory allows for the bytes they move (flagged in their
  // environment as "implausible"), and the first one's config and reason.
  std::size_t implausible = 0;
  std::string implausible_example;
  // Results whose samples spread more than TuneRequest::noisy_above (flagged in their environment
  // as "noisy"), and the first one's config and noise; and what the machine said when the tune
  // began (a loaded machine times noisily).
  std::size_t noisy = 0;
  std::string noisy_example;
  std::vector<std::string> warnings;
  // Runs of this host left 'running' by a process that had ended, marked 'abandoned' when this
  // tune opened the database.
  std::size_t abandoned_runs = 0;
  // Why --record could not write its files, when it could not (the run itself is complete).
  std::string record_error;

  nlohmann::json to_json() const;
};

// Progress events for the live line; all no-ops by default.
class TuneObserver {
 public:
  virtual ~TuneObserver() = default;
  virtual void started(const TuneSummary&, std::size_t planned) { (void)planned; }
  virtual void visited(const TuneSummary&, std::size_t planned) { (void)planned; }
  virtual void finished(const TuneSummary&) {}
};

// Tunes `request` on every device of `devices` at once, one tune per device model: identical
// devices share their measurements, different models are tuned one after the other and recorded
// as separate devices. Opens the devices on first use.
std::vector<TuneSummary> run_tune(const TuneRequest& request, TuneDevices& devices, TuneObserver& observer);

// Compiles every valid variant for `arch` without a GPU (the constraints see a nominal device
// of that architecture) and reports {"kernel", "backend", "arch", "problem", "space",
// "compiled", "cached", "failed", "failures": [{"config", "log"}], "seconds"}. A valid config
// that fails to compile is a bug in the constraints or the kernel.
// Compiles every valid variant, or with `covering` only a seeded covering sample of them
// (tuner/tune/covering_sample.hpp).
nlohmann::json run_compile_only(const TuneRequest& request, const std::string& arch, BuildEffort effort,
                                bool covering = false);

}  // namespace ktune
